// The workloads of a fault schedule, applied to the real Postgres source (row changes) or through
// the API (PUT of columns or model). Row texts follow issue 12's second report: `crash row 6143
// amber harp`, hundreds of rows sharing every word but the number, so a row lost from the index
// is not hidden by a near-twin answering in its place. A few rows share one identical text (ties)
// and some have no text at all (null body: not embedded, but counted as synced).
import type postgres from "postgres";
import type { Api, Column } from "../e2e/helpers.ts";
import { must } from "../e2e/helpers.ts";
import { MODELS, type Workload } from "./schedule.ts";

export const TABLE = "items";
export const TIE_TEXT = "identical twin text";

const META: Column[] = [
  { name: "category", role: "metadata", filter_type: "keyword" },
  { name: "n", role: "metadata", filter_type: "integer" },
];

/** Column variants a PUT moves between: the body alone, or a prefixed title then the body. */
export const COLUMN_VARIANTS: Column[][] = [
  [{ name: "body", role: "embedding" }, ...META],
  [{ name: "title", role: "embedding", ordinal: 1, name_prefix: "Title: " }, { name: "body", role: "embedding", ordinal: 2 }, ...META],
];

export async function createSource(sql: postgres.Sql, rows: number): Promise<void> {
  await sql.unsafe(`CREATE TABLE ${TABLE} (id bigint PRIMARY KEY, body text, title text, category text, n integer)`);
  await sql.unsafe(`INSERT INTO ${TABLE} ${rowsOf("generate_series(1, $1)", 0)}`, [rows]);
}

/**
 * A SELECT of full rows for ids `g` from `series`. Every 997th id carries the tie text (at most
 * ~20 rows in 20,000, within one query's limit of 100); every 31st has no body.
 */
function rowsOf(series: string, version: number, where = "true"): string {
  return `SELECT g, ${bodyOf("g", version)},
      CASE WHEN g % 23 = 0 THEN NULL ELSE format('%s title %s', (ARRAY['harp','lantern','river','falcon','orchid'])[1 + (g / 7) % 5], g % 40) END,
      (ARRAY['alpha','beta','gamma','delta'])[1 + g % 4], (g % 1000)::int
    FROM ${series} g WHERE ${where}`;
}

function bodyOf(id: string, version: number): string {
  const suffix = version > 0 ? ` || ' v${version}'` : "";
  return `CASE WHEN ${id} % 997 = 0 THEN '${TIE_TEXT}' WHEN ${id} % 31 = 0 THEN NULL
    ELSE format('crash row %s %s %s', ${id}, (ARRAY['amber','silent','north','velvet','copper','umber'])[1 + ${id} % 6], (ARRAY['harp','lantern','river','falcon','orchid'])[1 + (${id} / 7) % 5])${suffix} END`;
}

export type Target = { api: Api; tableId: string };

/** Applies one workload; answers a line for the log. `rows` is the world's initial size. */
export async function applyWorkload(sql: postgres.Sql, target: Target, w: Workload, rows: number): Promise<string> {
  const where = "slice" in w ? `id % ${w.slice.mod} = ${w.slice.rem}` : "";
  switch (w.kind) {
    case "insert": {
      const [top] = await sql.unsafe<{ mx: string }[]>(`SELECT coalesce(max(id), 0) AS mx FROM ${TABLE}`);
      const from = Number(top?.mx ?? 0) + 1;
      await sql.unsafe(`INSERT INTO ${TABLE} ${rowsOf(`generate_series(${from}::bigint, ${from + w.count - 1}::bigint)`, 0)}`);
      return `inserted ${w.count} rows from id ${from}`;
    }
    case "update_text":
      return `${(await sql.unsafe(`UPDATE ${TABLE} SET body = ${bodyOf("id", w.version)} WHERE ${where}`)).count} texts updated`;
    case "update_metadata":
      return `${(await sql.unsafe(`UPDATE ${TABLE} SET category = $1, n = n + 1 WHERE ${where}`, [w.category])).count} metadata updated`;
    case "delete":
      return `${(await sql.unsafe(`DELETE FROM ${TABLE} WHERE ${where}`)).count} rows deleted`;
    case "truncate":
      await sql.unsafe(`TRUNCATE ${TABLE}`);
      return "truncated";
    case "reinsert": {
      const sel = rowsOf(`generate_series(1::bigint, ${rows}::bigint)`, 0, `g % ${w.slice.mod} = ${w.slice.rem}`);
      return `${(await sql.unsafe(`INSERT INTO ${TABLE} ${sel} ON CONFLICT (id) DO NOTHING`)).count} rows re-inserted`;
    }
    case "pk_change": {
      // Moves the slice past the current maximum: distinct ids plus one constant stay distinct.
      const moved = await sql.unsafe(`UPDATE ${TABLE} SET id = id + (SELECT coalesce(max(id), 0) FROM ${TABLE}) WHERE ${where}`);
      return `${moved.count} primary keys changed`;
    }
    case "put_model":
      return put(target, MODELS[w.variant]!);
    case "put_columns":
      return put(target, { columns: COLUMN_VARIANTS[w.variant]! });
  }
}

async function put(target: Target, body: Record<string, unknown>): Promise<string> {
  const answer = await target.api.call("PUT", `/v1/vector-tables/${target.tableId}`, body);
  // A PUT while a re-backfill runs may be refused with a 409 (docs/api.md#errors); anything else is a finding.
  if (answer.status === 409) return `PUT ${JSON.stringify(body)} → 409 ${answer.body?.error?.code}`;
  const table = must(answer, 200);
  return `PUT ${JSON.stringify(body).slice(0, 80)} → ${table.sync_status}`;
}
