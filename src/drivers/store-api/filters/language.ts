// The filter language of docs/vector-tables.md#filters as TypeScript types, for TypeScript callers:
// given a vector table's metadata columns, a filter that compiles is one parse.ts accepts, bar the
// limits a type cannot count (nesting depth, 50 conditions, 1,000 values in a list) and whether a
// number is whole on an integer column. test/client/filter-types.test.ts holds the two to that.
// This file imports nothing: packages/client carries a copy of it (scripts/client-types.ts).

/** A metadata column's `filter_type`, as in the vector table's `columns`. */
export type FilterColumnType = "keyword" | "integer" | "float" | "boolean";

/**
 * A vector table's metadata columns by name, e.g. `{ category: "keyword"; price: "float" }`.
 * Written as a mapped constraint (not an index signature) so that interfaces qualify too.
 */
export type FilterColumns<M = Record<string, FilterColumnType>> = { readonly [K in keyof M]: FilterColumnType };

/** What a column of this type holds in JSON: keyword → string, boolean → boolean, integer and float → number. */
export type FilterValue<T extends FilterColumnType = FilterColumnType> = T extends "keyword" ? string : T extends "boolean" ? boolean : number;

type RangeOperators = { gt?: number; gte?: number; lt?: number; lte?: number };

/** Every operator a column of type T takes; `gt`/`gte`/`lt`/`lte` only on numbers. */
export type FilterOperators<T extends FilterColumnType = FilterColumnType> = {
  eq?: FilterValue<T>;
  neq?: FilterValue<T>;
  in?: readonly FilterValue<T>[];
  nin?: readonly FilterValue<T>[];
  exists?: boolean;
  // Not distributed over T: a column of unknown type (T the whole union) takes every operator.
} & ([T] extends ["keyword" | "boolean"] ? {} : RangeOperators);

// `{"col": {}}` is refused: a condition object names at least one operator. Each member of this
// union requires one operator and allows the rest.
type OneOrMore<O> = { [K in keyof O]-?: { [P in K]-?: Exclude<O[P], undefined> } & { [P in Exclude<keyof O, K>]?: O[P] } }[keyof O];

/** A column's condition: an operator object (all must hold), a value (means `eq`) or an array (means `in`). */
export type FilterCondition<T extends FilterColumnType = FilterColumnType> = FilterValue<T> | readonly FilterValue<T>[] | OneOrMore<FilterOperators<T>>;

/** `$or`: a non-empty array of filters, at least one of which must hold. */
export type FilterBranches<F> = readonly [F, ...F[]];

/** A filter over known columns: each key a column of M (all must hold), plus `$or` at any level. */
export type ColumnFilter<M extends FilterColumns<M>> = { [K in Exclude<keyof M, "$or"> & string]?: FilterCondition<M[K]> } & {
  $or?: FilterBranches<ColumnFilter<M>>;
};

/**
 * A filter over columns the compiler does not know. The index signature must also admit `$or`'s
 * branches, so a column given an array of objects compiles here (the service refuses it); name
 * the columns (`Filter<M>`) to have that caught too.
 */
export type AnyColumnFilter = { [column: string]: FilterCondition | FilterBranches<AnyColumnFilter> } & { $or?: FilterBranches<AnyColumnFilter> };

/**
 * The `filters` of a query. `Filter<{ category: "keyword"; price: "float" }>` checks column names,
 * operators and value types; plain `Filter` checks operators and value kinds for any column.
 */
export type Filter<M extends FilterColumns<M> = Record<string, FilterColumnType>> = string extends keyof M ? AnyColumnFilter : ColumnFilter<M>;

/** A result's `metadata` for those columns: every column, typed, or null. */
export type FilterMetadata<M extends FilterColumns<M> = Record<string, FilterColumnType>> = string extends keyof M
  ? { [column: string]: FilterValue | null }
  : { [K in keyof M]: FilterValue<M[K]> | null };
