// What a restarted service must serve, checked from outside as a user would: every source row
// with text found by its own text, nothing deleted or stale served, no duplicates, counts right.
// (Issue 12: the defects slipped through because tests looked at rows in libSQL.)
//
// Ties: rows whose rendered texts are identical embed to one vector and tie at score 1. Such a
// group is queried once with a limit of its size + 9 (the source keeps groups at ~20 rows, far
// below the query limit of 100), and each member must be among the results at score ≥ 0.999;
// a row whose text is unique must be the top result at ≥ 0.999. One query per distinct text.
import type postgres from "postgres";
import { embeddedText, metadataOf, must, type Api, type Column, type Row } from "../e2e/helpers.ts";
import { TABLE } from "./workload.ts";

export type Finding = { kind: string; detail: string };
export type Checked = { rowsChecked: number; queries: number; findings: Finding[] };

const MIN_SCORE = 0.999;
// More in flight is slower on 2 cores (measured: 2.2 ms a query at 4, 13 ms at 8).
const CONCURRENCY = 3;

const isoAfter = (iso: string | null, ms: number) => iso !== null && Date.parse(iso) > ms;

/**
 * Waits until the table is `synced`, no backfill task is pending or running for it, and two
 * batch passes finished after `sinceMs`: passes of a table run one at a time, so the second one
 * started after the first ended, hence after every source write made before `sinceMs`.
 * Also records issue 12 (4): a table reading `synced` while its backfill task still runs.
 */
export async function waitCaughtUp(api: Api, tableId: string, sinceMs: number, timeoutMs: number, onGivenUp?: (line: string) => void): Promise<Finding[]> {
  const findings: Finding[] = [];
  const resume = resumer(api, tableId, onGivenUp);
  const passes = new Set<string>();
  const deadline = Date.now() + timeoutMs;
  let last = "";
  while (Date.now() < deadline) {
    const table = await api.call("GET", `/v1/vector-tables/${tableId}`).catch((e) => ({ status: 0, body: String(e) }));
    if (table.status !== 200) return [...findings, { kind: "table_unreadable", detail: `GET vector table → ${table.status} ${JSON.stringify(table.body).slice(0, 300)}` }];
    // last_sync_at lives on sync/status, not on the vector table object.
    const status = must(await api.call("GET", `/v1/vector-tables/${tableId}/sync/status`), 200);
    last = `${table.body.sync_status} last_sync_at=${status.last_sync_at} synced_rows=${table.body.synced_rows} last_error=${status.last_error}`;
    if (table.body.sync_status === "error") await resume();
    if (table.body.sync_status === "synced") {
      const tasks = must(await api.call("GET", `/v1/tasks?target_id=${tableId}`), 200).data as { task_type: string; status: string }[];
      const busy = tasks.filter((t) => (t.task_type === "backfill" || t.task_type === "rebackfill") && (t.status === "running" || t.status === "pending"));
      if (busy.length) {
        if (!findings.some((f) => f.kind === "task_running_after_synced")) findings.push({ kind: "task_running_after_synced", detail: `table synced, tasks ${busy.map((t) => `${t.task_type}:${t.status}`).join(",")}` });
      } else if (isoAfter(status.last_sync_at, sinceMs)) {
        passes.add(status.last_sync_at);
        if (passes.size >= 2) return findings;
      }
    }
    await Bun.sleep(200);
  }
  const tasks = await api.call("GET", `/v1/tasks?target_id=${tableId}`).catch(() => ({ status: 0, body: null }));
  const summary = (tasks.body?.data ?? []).slice(0, 4).map((t: any) => `${t.task_type}:${t.status} attempts=${t.attempts} error=${JSON.stringify(t.error ?? t.last_error ?? null)?.slice(0, 120)}`);
  return [...findings, { kind: "not_caught_up", detail: `not synced and caught up within ${timeoutMs} ms: ${last}; tasks ${summary.join(" | ")}` }];
}

/**
 * The words of a fill task failed for good because its last `max_attempts` runs all died (the
 * process killed) before a checkpoint: CONTRACT 8 fails such a task and turns its table `error`.
 * kill_in_startup kills up to four runs in a row within 1.5 s of their start, and a re-backfill's
 * first page may take longer than that, so the harness meets this outcome by design.
 */
export const GIVEN_UP_BY_KILLS = /its worker died\); \d+ of \d+ runs in a row saved no progress/;

/**
 * A table in `error` because kills exhausted its fill task (GIVEN_UP_BY_KILLS), resumed as a user
 * would: `POST …/backfill`, which continues from the task's checkpoint (docs/day-two.md#tasks).
 * Answers a line for the log, or null when the table's `error` is something else (a failure the
 * caller reports as it stands).
 */
export async function resumeIfGivenUpByKills(api: Api, tableId: string): Promise<string | null> {
  const tasks = must(await api.call("GET", `/v1/tasks?target_id=${tableId}`), 200).data as { task_type: string; status: string; attempts: number; last_error: string | null }[];
  const fill = tasks.find((t) => t.task_type === "backfill" || t.task_type === "rebackfill");
  if (!fill || fill.status !== "failed" || !GIVEN_UP_BY_KILLS.test(fill.last_error ?? "")) return null;
  const resumed = await api.call("POST", `/v1/vector-tables/${tableId}/backfill`);
  if (resumed.status !== 200 && resumed.status !== 202) return null;
  return `${fill.task_type} given up after ${fill.attempts} runs killed before a checkpoint (CONTRACT 8); POST backfill → ${resumed.status}`;
}

/** Resumes a fill exhausted by kills (resumeIfGivenUpByKills), once per wait. */
export function resumer(api: Api, tableId: string, onGivenUp?: (line: string) => void): () => Promise<void> {
  let done = false;
  return async () => {
    if (done) return;
    const line = await resumeIfGivenUpByKills(api, tableId);
    if (line) (done = true), onGivenUp?.(line);
  };
}

/**
 * Tells an index that lost (or never reached) a row from a row that is not stored at all: the
 * same text again, filtered to the row's own metadata (a handful of rows, which the planner
 * searches exactly). Both are failures; the words say which.
 */
async function stored(api: Api, tableId: string, text: string, id: string, metadata: Record<string, unknown>): Promise<string> {
  const filters = Object.fromEntries(Object.entries(metadata).filter(([, v]) => v !== null));
  const answer = await api.call("POST", `/v1/vector-tables/${tableId}/query`, { query: text, limit: 100, filters }).catch(() => null);
  const hit = (answer?.body?.results as Hit[] | undefined)?.find((h) => h.id === id);
  if (!hit) return `not found with a filter on its metadata ${JSON.stringify(filters)} either: not stored`;
  return `found at ${hit.similarity_score.toFixed(4)} with a filter on its metadata: stored, missed by the unfiltered search`;
}

type Hit = { id: string; similarity_score: number; embedded_text: string; metadata: Record<string, unknown> };

/** Runs `fn` over `items` with at most `n` in flight. */
async function pool<T>(items: T[], n: number, fn: (x: T) => Promise<void>): Promise<void> {
  let i = 0;
  await Promise.all(Array.from({ length: n }, async () => {
    while (i < items.length) await fn(items[i++]!);
  }));
}

export async function checkServed(api: Api, sql: postgres.Sql, tableId: string): Promise<Checked> {
  const findings: Finding[] = [];
  const add = (kind: string, detail: string) => findings.push({ kind, detail });
  const table = must(await api.call("GET", `/v1/vector-tables/${tableId}`), 200);
  const columns = table.columns as Column[];
  const rows = (await sql.unsafe(`SELECT id, body, title, category, n FROM ${TABLE}`)) as unknown as Row[];
  const byId = new Map<string, { text: string | null; metadata: Record<string, unknown> }>();
  const groups = new Map<string, string[]>();
  for (const r of rows) {
    const id = String(r.id), text = embeddedText(columns, r);
    byId.set(id, { text, metadata: metadataOf(columns, r) });
    if (text !== null) groups.set(text, [...(groups.get(text) ?? []), id]);
  }
  // docs/vector-tables.md#text-and-metadata: a row with empty text counts as synced, so synced_rows is every source row.
  if (table.synced_rows !== rows.length) add("synced_rows", `synced_rows ${table.synced_rows} ≠ ${rows.length} source rows`);
  if (table.total_rows !== rows.length) add("total_rows", `total_rows ${table.total_rows} ≠ ${rows.length} source rows`);
  let rowsChecked = 0;
  await pool([...groups], CONCURRENCY, async ([text, ids]) => {
    const answer = await api.call("POST", `/v1/vector-tables/${tableId}/query`, { query: text, limit: Math.min(100, ids.length + 9) }).catch((e) => ({ status: 0, body: String(e) }));
    rowsChecked += ids.length;
    if (answer.status !== 200) return void add("query_failed", `${JSON.stringify(text)} → ${answer.status} ${JSON.stringify(answer.body).slice(0, 200)}`);
    const hits = answer.body.results as Hit[];
    const seen = new Set<string>();
    for (const h of hits) {
      if (seen.has(h.id)) add("duplicate_id", `id ${h.id} twice in the answer to ${JSON.stringify(text)}`);
      seen.add(h.id);
      const src = byId.get(h.id);
      if (!src || src.text === null) add("deleted_row_served", `id ${h.id} (${src ? "no text" : "not in source"}) served as ${JSON.stringify(h.embedded_text)}`);
      else if (h.embedded_text !== src.text) add("stale_text_served", `id ${h.id} served as ${JSON.stringify(h.embedded_text)}, source ${JSON.stringify(src.text)}`);
      else if (Object.entries(src.metadata).some(([k, v]) => h.metadata[k] !== v)) add("stale_metadata_served", `id ${h.id} metadata ${JSON.stringify(h.metadata)}, source ${JSON.stringify(src.metadata)}`);
    }
    for (const id of ids) {
      const hit = ids.length === 1 ? (hits[0]?.id === id ? hits[0] : undefined) : hits.find((h) => h.id === id);
      if (!hit || hit.similarity_score < MIN_SCORE) {
        const top = hits.slice(0, 3).map((h) => `${h.id}@${h.similarity_score.toFixed(4)}`).join(",");
        const why = await stored(api, tableId, text, id, byId.get(id)!.metadata);
        add("unfindable", `id ${id} by ${JSON.stringify(text)}: ${hit ? `score ${hit.similarity_score}` : `not ${ids.length === 1 ? "top" : "among results"}`} (top ${top || "none"}); ${why}`);
      }
    }
  });
  const keyword = await checkKeyword(api, tableId, byId, groups);
  findings.push(...keyword.findings);
  return { rowsChecked, queries: groups.size + keyword.queries, findings };
}

/** Rows checked in keyword mode: every one whose id is a multiple of this (about 1 in 17). */
const KEYWORD_SAMPLE = 17;

const wordsOf = (text: string): string[] => [...new Set(text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])];

/**
 * The keyword index after a restart (docs/vector-tables.md#query-modes): sampled rows with a
 * unique text are each queried in `keyword` mode by the rarest word of their text, and must be
 * among the answers with a keyword score (every row holding that word fits in the limit of 100);
 * every row served must hold the word and be the source's current row. `keyword_unfindable`,
 * `keyword_mismatch`, or the findings of the cosine checks above.
 */
async function checkKeyword(api: Api, tableId: string, byId: Map<string, { text: string | null }>, groups: Map<string, string[]>): Promise<{ queries: number; findings: Finding[] }> {
  const findings: Finding[] = [];
  const holders = new Map<string, number>();
  for (const { text } of byId.values()) for (const w of text === null ? [] : wordsOf(text)) holders.set(w, (holders.get(w) ?? 0) + 1);
  const sampled = [...groups].filter(([, ids]) => ids.length === 1 && Number(ids[0]) % KEYWORD_SAMPLE === 0);
  let queries = 0;
  await pool(sampled, CONCURRENCY, async ([text, [id]]) => {
    const word = wordsOf(text).sort((a, b) => holders.get(a)! - holders.get(b)!)[0];
    if (word === undefined || holders.get(word)! > 90) return;
    queries++;
    const answer = await api.call("POST", `/v1/vector-tables/${tableId}/query`, { query: word, mode: "keyword", limit: 100 }).catch((e) => ({ status: 0, body: String(e) }));
    if (answer.status !== 200) return void findings.push({ kind: "query_failed", detail: `keyword ${JSON.stringify(word)} → ${answer.status} ${JSON.stringify(answer.body).slice(0, 200)}` });
    const hits = answer.body.results as (Hit & { keyword_score: number | null })[];
    const hit = hits.find((h) => h.id === id);
    if (!hit || hit.keyword_score === null) findings.push({ kind: "keyword_unfindable", detail: `id ${id} by the word ${JSON.stringify(word)} of ${JSON.stringify(text)}: ${hit ? "no keyword score" : `not among ${hits.length} results`}` });
    for (const h of hits) {
      const src = byId.get(h.id);
      if (!src || src.text === null || h.embedded_text !== src.text || !wordsOf(h.embedded_text).includes(word)) {
        findings.push({ kind: "keyword_mismatch", detail: `id ${h.id} served for the word ${JSON.stringify(word)} as ${JSON.stringify(h.embedded_text)}, source ${JSON.stringify(src?.text ?? null)}` });
      }
    }
  });
  return { queries, findings };
}
