// The filter language (docs/vector-tables.md#filters) as JSON Schema, for the OpenAPI document: API users
// read the rules there, so the descriptions carry them in full. The schema checks the shape; the
// column names and their types are the table's, checked by parse.ts when a query runs.
import { FILTER_MAX_CONDITIONS, FILTER_MAX_DEPTH, FILTER_MAX_LIST } from "./ast.ts";

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

const scalar = {
  type: ["string", "number", "boolean"],
  description: "A keyword column takes a string, an integer column a whole number, a float column any number, a boolean column true or false. null is never a value: use `exists`.",
};

const list = (meaning: string) => ({
  type: "array",
  maxItems: FILTER_MAX_LIST,
  items: ref("FilterValue"),
  description: `${meaning} (at most ${FILTER_MAX_LIST} values, each of the column's type).`,
});

const number = (meaning: string) => ({ type: "number", description: `${meaning}. Integer and float columns only.` });

const FilterOperators = {
  type: "object",
  minProperties: 1,
  additionalProperties: false,
  description: "One or more operators, all of which must hold.",
  properties: {
    eq: { ...ref("FilterValue"), description: "Equals the value. A null column value never matches." },
    neq: { ...ref("FilterValue"), description: "Differs from the value. A null column value matches." },
    gt: number("Greater than the number; a null column value never matches"),
    gte: number("At least the number; a null column value never matches"),
    lt: number("Less than the number; a null column value never matches"),
    lte: number("At most the number; a null column value never matches"),
    in: list("Is one of the values; a null column value never matches"),
    nin: list("Is none of the values; a null column value matches"),
    exists: { type: "boolean", description: "true: the column is not null; false: the column is null." },
  },
};

const FilterCondition = {
  description: "A condition on one metadata column: an object of operators (all must hold), or a shorthand — a plain value means `eq`, an array means `in`.",
  anyOf: [ref("FilterValue"), list("Shorthand for `in`"), ref("FilterOperators")],
};

const Filter = {
  type: "object",
  description: [
    "Metadata filters of a query. Each key is a metadata column of the vector table (its `filter_type` sets the value types) and each value a condition on it; all keys must hold (AND).",
    "The key `$or` holds a non-empty array of filters, at least one of which must hold; it may stand beside column keys at any level.",
    `Limits: at most ${FILTER_MAX_DEPTH} levels of nesting (the top object is level 1, each \`$or\` adds one) and ${FILTER_MAX_CONDITIONS} conditions (each operator counts one).`,
    "`{}` and null mean no filter. An unknown column, an unknown operator, a value of the wrong type, an empty condition or an empty `$or` is 400 `validation_error`, with every problem listed in `details` by path (e.g. `filters.price.gte`).",
  ].join(" "),
  properties: {
    $or: { type: "array", minItems: 1, items: ref("Filter"), description: "At least one of these filters must hold." },
  },
  additionalProperties: ref("FilterCondition"),
  examples: [{ category: { in: ["outdoors", "sports"] }, price: { gte: 20, lt: 100 }, $or: [{ in_stock: true }, { restock_days: { lte: 7 } }] }],
};

/** The OpenAPI components that describe `filters`; `Filter` is the one a query's body refers to. */
export const FILTER_JSON_SCHEMAS: Record<string, Record<string, unknown>> = { Filter, FilterCondition, FilterOperators, FilterValue: scalar };
