// Parses and validates the docs/vector-tables.md#filters filter language against a metadata schema. Every problem
// found is collected (path + message), so one 400 answer lists them all.
import { FilterError, type FilterIssue } from "../errors.ts";
import type { MetadataColumn, MetadataType } from "../types.ts";
import {
  FILTER_MAX_CONDITIONS,
  FILTER_MAX_DEPTH,
  FILTER_MAX_LIST,
  type CompareOp,
  type FilterNode,
  type Scalar,
} from "./ast.ts";

const COMPARE_OPS = new Set(["eq", "neq", "gt", "gte", "lt", "lte"]);
const RANGE_OPS = new Set(["gt", "gte", "lt", "lte"]);

interface Ctx {
  columns: Map<string, { index: number; type: MetadataType }>;
  issues: FilterIssue[];
  conditions: number;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Returns null for "no filter" (absent, null or `{}`); throws FilterError otherwise invalid. */
export function parseFilter(input: unknown, columns: MetadataColumn[], path = "filters"): FilterNode | null {
  if (input === undefined || input === null) return null;
  const ctx: Ctx = {
    columns: new Map(columns.map((c, index) => [c.name, { index, type: c.type }])),
    issues: [],
    conditions: 0,
  };
  const node = parseObject(input, path, 1, ctx);
  if (ctx.conditions > FILTER_MAX_CONDITIONS) {
    ctx.issues.push({ path, message: `a filter may hold at most ${FILTER_MAX_CONDITIONS} conditions (found ${ctx.conditions})` });
  }
  if (ctx.issues.length > 0) throw new FilterError(ctx.issues);
  return node && isEmptyAnd(node) ? null : node;
}

function isEmptyAnd(node: FilterNode): boolean {
  return node.kind === "and" && node.items.length === 0;
}

function parseObject(input: unknown, path: string, depth: number, ctx: Ctx): FilterNode | null {
  if (!isPlainObject(input)) {
    ctx.issues.push({ path, message: "a filter must be an object" });
    return null;
  }
  if (depth > FILTER_MAX_DEPTH) {
    ctx.issues.push({ path, message: `filters may nest at most ${FILTER_MAX_DEPTH} levels` });
    return null;
  }
  const items: FilterNode[] = [];
  for (const [key, value] of Object.entries(input)) {
    const node = key === "$or" ? parseOr(value, `${path}.$or`, depth, ctx) : parseColumn(key, value, `${path}.${key}`, ctx);
    if (node) items.push(node);
  }
  return items.length === 1 ? items[0]! : { kind: "and", items };
}

function parseOr(value: unknown, path: string, depth: number, ctx: Ctx): FilterNode | null {
  if (!Array.isArray(value) || value.length === 0) {
    ctx.issues.push({ path, message: "$or must be a non-empty array of filter objects" });
    return null;
  }
  const items: FilterNode[] = [];
  value.forEach((branch, i) => {
    const node = parseObject(branch, `${path}[${i}]`, depth + 1, ctx);
    // An empty branch `{}` matches every row, which makes the whole `$or` match every row.
    if (node) items.push(node);
  });
  if (items.some(isEmptyAnd)) return { kind: "and", items: [] };
  return { kind: "or", items };
}

function parseColumn(name: string, value: unknown, path: string, ctx: Ctx): FilterNode | null {
  const column = ctx.columns.get(name);
  if (!column) {
    ctx.issues.push({ path, message: `unknown filter column "${name}"` });
    return null;
  }
  if (Array.isArray(value)) return parseOp("in", value, column, path, ctx);
  if (!isPlainObject(value)) return parseOp("eq", value, column, path, ctx);
  const ops = Object.entries(value);
  if (ops.length === 0) {
    ctx.issues.push({ path, message: "a column condition needs at least one operator" });
    return null;
  }
  const items: FilterNode[] = [];
  for (const [op, operand] of ops) {
    const node = parseOp(op, operand, column, `${path}.${op}`, ctx);
    if (node) items.push(node);
  }
  return items.length === 1 ? items[0]! : { kind: "and", items };
}

function parseOp(op: string, operand: unknown, column: { index: number; type: MetadataType }, path: string, ctx: Ctx): FilterNode | null {
  ctx.conditions++;
  if (op === "exists") {
    if (typeof operand === "boolean") return { kind: "exists", column: column.index, value: operand };
    ctx.issues.push({ path, message: "exists takes true or false" });
    return null;
  }
  if (op === "in" || op === "nin") return parseList(op, operand, column, path, ctx);
  if (!COMPARE_OPS.has(op)) {
    ctx.issues.push({ path, message: `unknown operator "${op}" (use eq, neq, gt, gte, lt, lte, in, nin, exists)` });
    return null;
  }
  if (RANGE_OPS.has(op) && column.type !== "integer" && column.type !== "float") {
    ctx.issues.push({ path, message: `${op} applies only to integer and float columns, not ${column.type}` });
    return null;
  }
  if (operand === null) {
    ctx.issues.push({ path, message: `${op} does not take null; use exists` });
    return null;
  }
  const message = RANGE_OPS.has(op) ? numberProblem(operand) : valueProblem(operand, column.type);
  if (message) {
    ctx.issues.push({ path, message });
    return null;
  }
  return { kind: "cmp", column: column.index, op: op as CompareOp, value: operand as Scalar };
}

function parseList(op: "in" | "nin", operand: unknown, column: { index: number; type: MetadataType }, path: string, ctx: Ctx): FilterNode | null {
  if (!Array.isArray(operand)) {
    ctx.issues.push({ path, message: `${op} takes an array` });
    return null;
  }
  if (operand.length > FILTER_MAX_LIST) {
    ctx.issues.push({ path, message: `${op} takes at most ${FILTER_MAX_LIST} values` });
    return null;
  }
  let ok = true;
  operand.forEach((v, i) => {
    const message = v === null ? "null is not a value; use exists" : valueProblem(v, column.type);
    if (message) {
      ctx.issues.push({ path: `${path}[${i}]`, message });
      ok = false;
    }
  });
  return ok ? { kind: "set", column: column.index, op, values: operand as Scalar[] } : null;
}

function numberProblem(v: unknown): string | null {
  return typeof v === "number" && Number.isFinite(v) ? null : "expected a number";
}

/** eq/neq/in/nin: the value's type must match the column's (an integer is fine on a float column). */
function valueProblem(v: unknown, type: MetadataType): string | null {
  switch (type) {
    case "keyword":
      return typeof v === "string" ? null : "expected a string (keyword column)";
    case "boolean":
      return typeof v === "boolean" ? null : "expected true or false (boolean column)";
    case "float":
      return typeof v === "number" && Number.isFinite(v) ? null : "expected a number (float column)";
    case "integer":
      return typeof v === "number" && Number.isSafeInteger(v) ? null : "expected an integer (integer column)";
  }
}
