// The part users come for: backfill with a progress bar, queries with filters, and a source edit
// that batch sync picks up on its own.
import { curlCommand, type DemoApi } from "./client.ts";
import { truncate, type Output } from "./output.ts";
import { EDITED_PRODUCT, EDITED_PRODUCT_ID, product } from "./products.ts";
import type { DemoTable } from "./setup.ts";
import type { DemoSource } from "./source.ts";

type TableState = { sync_status: string; total_rows: number; synced_rows: number };
type SyncStatus = { sync_status: string; last_sync_at: string | null; rows_pending: number; staleness_secs: number; last_error: string | null };
type QueryAnswer = { results: { id: string; similarity_score: number; metadata: Record<string, unknown>; embedded_text: string }[]; model: string; total_results: number };

const POLL_MS = 100;
const BACKFILL_DEADLINE_MS = 60_000;
/** Two or three batch passes at the demo's 2 s interval, with room for a slow machine. */
const SYNC_DEADLINE_MS = 30_000;

async function failureOf(api: DemoApi, table: DemoTable): Promise<string> {
  const status = await api.call<SyncStatus>("GET", `/v1/vector-tables/${table.id}/sync/status`, { auth: "key", quiet: true });
  return `vector table went to ${status.sync_status}: ${status.last_error ?? "no error recorded"}`;
}

export async function backfill(api: DemoApi, out: Output, table: DemoTable): Promise<void> {
  out.step("Backfill: read every row, embed, store");
  await api.call("POST", `/v1/vector-tables/${table.id}/backfill`, { auth: "key" });
  out.note("# progress is synced_rows / total_rows of the vector table:");
  out.curl(curlCommand(api.baseUrl, "GET", `/v1/vector-tables/${table.id}`, "key"));
  const bar = out.progress("backfill");
  const started = Date.now();
  for (;;) {
    const state = await api.call<TableState>("GET", `/v1/vector-tables/${table.id}`, { auth: "key", quiet: true });
    if (state.sync_status === "synced") {
      bar.finish(state.synced_rows, state.total_rows);
      out.note(`backfill done: ${state.synced_rows}/${state.total_rows} rows synced in ${((Date.now() - started) / 1000).toFixed(1)} s`);
      break;
    }
    if (state.sync_status !== "backfilling") throw new Error(await failureOf(api, table));
    if (state.total_rows > 0) bar.update(state.synced_rows, state.total_rows);
    if (Date.now() - started > BACKFILL_DEADLINE_MS) throw new Error(`backfill not finished after ${BACKFILL_DEADLINE_MS / 1000} s`);
    await Bun.sleep(POLL_MS);
  }
  out.step("Sync status");
  const status = await api.call<SyncStatus>("GET", `/v1/vector-tables/${table.id}/sync/status`, { auth: "key" });
  out.note(`sync_status ${status.sync_status}, rows_pending ${status.rows_pending}, staleness_secs ${status.staleness_secs}, last_sync_at ${status.last_sync_at ?? "-"}`);
}

type Example = { title: string; query: string; limit: number; filters?: (col: DemoSource["column"]) => Record<string, unknown> };

const EXAMPLES: Example[] = [
  { title: "no filter", query: "wireless noise cancelling headphones", limit: 5 },
  // No word in common with "camping tent": a semantic model finds it, a lexical one cannot.
  { title: "a paraphrase, no filter", query: "portable shelter for a night in the woods", limit: 5 },
  { title: "outdoors under $100", query: "waterproof gear for rainy hiking trips", limit: 5, filters: (c) => ({ [c("category")]: { eq: "outdoors" }, [c("price")]: { lt: 100 } }) },
  { title: "in stock, kitchen or books", query: "coffee", limit: 5, filters: (c) => ({ [c("in_stock")]: { eq: true }, [c("category")]: { in: ["kitchen", "books"] } }) },
];

function printResults(out: Output, source: DemoSource, answer: QueryAnswer): void {
  const meta = (r: QueryAnswer["results"][number], field: "category" | "price" | "in_stock") => {
    const value = r.metadata[source.column(field)];
    return typeof value === "number" ? value.toFixed(2) : String(value ?? "-");
  };
  out.table(
    ["#", "id", "score", "category", "price", "in_stock", "embedded text"],
    answer.results.map((r, i) => [String(i + 1), r.id, r.similarity_score.toFixed(3), meta(r, "category"), meta(r, "price"), meta(r, "in_stock"), truncate(r.embedded_text.replaceAll("\n", " | "), 60)]),
  );
}

export async function runQueries(api: DemoApi, out: Output, source: DemoSource, table: DemoTable): Promise<void> {
  for (const [i, example] of EXAMPLES.entries()) {
    out.step(`Query ${i + 1} (${example.title})`);
    const body = { query: example.query, limit: example.limit, ...(example.filters ? { filters: example.filters(source.column) } : {}) };
    const answer = await api.call<QueryAnswer>("POST", `/v1/vector-tables/${table.id}/query`, { auth: "key", body });
    out.note(`query ${i + 1}: ${answer.total_results} results (model ${answer.model})`);
    printResults(out, source, answer);
  }
}

export async function showSyncPickup(api: DemoApi, out: Output, source: DemoSource, table: DemoTable, intervalSec: string): Promise<void> {
  out.step(`Edit a product in the source; batch sync (every ${intervalSec} s here, VECSYNC_SYNC_INTERVAL) picks it up`);
  const before = product(EDITED_PRODUCT_ID);
  out.note(`# product ${EDITED_PRODUCT_ID} was: ${before.name} ($${before.price})`);
  const sets = Object.entries(EDITED_PRODUCT).map(([k, v]) => `${source.column(k as keyof typeof EDITED_PRODUCT)} = ${typeof v === "string" ? `'${truncate(v, 32)}'` : v}`);
  out.note(`# UPDATE ${source.table} SET ${sets.join(", ")} WHERE ${source.column("id")} = ${EDITED_PRODUCT_ID}`);
  await source.update(EDITED_PRODUCT_ID, EDITED_PRODUCT);
  const edited = Date.now();
  const path = `/v1/vector-tables/${table.id}/query`;
  // Found by its new price (no other product costs that) with its new text: true for any model.
  const probe = { query: EDITED_PRODUCT.name, limit: 1, filters: { [source.column("price")]: { eq: EDITED_PRODUCT.price } } };
  out.note(`# ask until the product answers with its new price and text (${EDITED_PRODUCT.price} is no other product's price):`);
  out.curl(curlCommand(api.baseUrl, "POST", path, "key", probe));
  for (;;) {
    const answer = await api.call<QueryAnswer>("POST", path, { auth: "key", body: probe, quiet: true });
    if (answer.results.some((r) => r.id === String(EDITED_PRODUCT_ID) && r.embedded_text.includes("cactus"))) break;
    if (Date.now() - edited > SYNC_DEADLINE_MS) throw new Error(`the edit of product ${EDITED_PRODUCT_ID} was not picked up within ${SYNC_DEADLINE_MS / 1000} s: ${await failureOf(api, table)}`);
    await Bun.sleep(4 * POLL_MS);
  }
  out.note(`sync picked up the change to product ${EDITED_PRODUCT_ID} after ${((Date.now() - edited) / 1000).toFixed(1)} s; where it ranks now:`);
  const answer = await api.call<QueryAnswer>("POST", path, { auth: "key", body: { query: "glow in the dark cactus lantern", limit: 3 } });
  printResults(out, source, answer);
}
