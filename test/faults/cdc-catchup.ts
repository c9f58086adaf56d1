// "Caught up" for a cdc table, from observable state only, with no periodic pass to count on (the
// cdc world reconciles an hour apart: the stream alone must deliver). A stream reports no pass to
// wait for, and `rows_pending` and `staleness_secs` only count changes it has read, so both read 0
// before it has read the last writes. Hence: wait until sync/status reads quiet (synced, no fill
// task pending or running, rows_pending 0, staleness_secs 0) and the table's counters equal the
// source's row count, then run the checks of checker.ts, again and again until they pass or the
// limit runs out: the stream applies continuously, so "eventually consistent within the limit" is
// the check. Past the limit, the last failing check is what is reported.
import type postgres from "postgres";
import { must, type Api } from "../e2e/helpers.ts";
import { checkServed, resumer, type Checked, type Finding } from "./checker.ts";
import { TABLE } from "./workload.ts";

type Quiet = { quiet: boolean; error?: boolean; state: string; unreadable?: Finding; taskAfterSynced?: Finding };

/** One look at the table, its sync/status, its tasks and the source's row count. */
async function look(api: Api, sql: postgres.Sql, tableId: string): Promise<Quiet> {
  try {
    return await lookOnce(api, sql, tableId);
  } catch (e) {
    // A must() refused: the process died or answered out of contract between two reads.
    return { quiet: false, state: "", unreadable: { kind: "table_unreadable", detail: String(e).slice(0, 300) } };
  }
}

async function lookOnce(api: Api, sql: postgres.Sql, tableId: string): Promise<Quiet> {
  const table = await api.call("GET", `/v1/vector-tables/${tableId}`).catch((e) => ({ status: 0, body: String(e) }));
  if (table.status !== 200) return { quiet: false, state: "", unreadable: { kind: "table_unreadable", detail: `GET vector table → ${table.status} ${JSON.stringify(table.body).slice(0, 300)}` } };
  const status = must(await api.call("GET", `/v1/vector-tables/${tableId}/sync/status`), 200);
  const tasks = must(await api.call("GET", `/v1/tasks?target_id=${tableId}`), 200).data as { task_type: string; status: string }[];
  const busy = tasks.filter((t) => (t.task_type === "backfill" || t.task_type === "rebackfill") && (t.status === "running" || t.status === "pending"));
  // The source may be dropping connections (terminate_backends): a failed count is "not yet".
  const source = await sql.unsafe<{ n: string }[]>(`SELECT count(*) AS n FROM ${TABLE}`).then(([r]) => Number(r!.n), (e) => `unreadable (${e})`);
  const b = table.body;
  const state = `${b.sync_status} rows_pending=${status.rows_pending} staleness_secs=${status.staleness_secs} total_rows=${b.total_rows} synced_rows=${b.synced_rows} source_rows=${source} busy=${busy.map((t) => `${t.task_type}:${t.status}`).join(",") || "none"} last_error=${status.last_error}`;
  const synced = b.sync_status === "synced";
  return {
    error: b.sync_status === "error",
    quiet: synced && !busy.length && status.rows_pending === 0 && status.staleness_secs === 0 && b.total_rows === source && b.synced_rows === source,
    state,
    taskAfterSynced: synced && busy.length ? { kind: "task_running_after_synced", detail: `table synced, tasks ${busy.map((t) => `${t.task_type}:${t.status}`).join(",")}` } : undefined,
  };
}

/** Waits until sync/status reads quiet (no checks): a SIGTERM's "workloads applied" in a cdc world. */
export async function waitStreamQuiet(api: Api, sql: postgres.Sql, tableId: string, timeoutMs: number, onGivenUp?: (line: string) => void): Promise<Finding[]> {
  const deadline = Date.now() + timeoutMs;
  const resume = resumer(api, tableId, onGivenUp);
  let last = "";
  while (Date.now() < deadline) {
    const q = await look(api, sql, tableId);
    if (q.unreadable) return [q.unreadable];
    if (q.error) await resume();
    if (q.quiet) return [];
    last = q.state;
    await Bun.sleep(200);
  }
  return [{ kind: "not_caught_up", detail: `not quiet within ${timeoutMs} ms: ${last}` }];
}

export type Consistent = { findings: Finding[]; checked: Checked | null; tries: number };

/**
 * Quiet, then the checks until they pass. `pending`, when given, answers what is still awaited
 * besides (say, a healed feed's account in last_error) or null: the checks wait for it too, since
 * a heal that comes later rewrites the table. Findings: table_unreadable, task_running_after_synced,
 * not_caught_up (never quiet), heal_not_described (quiet, the account never came); `checked` holds
 * the last check's findings.
 */
export async function waitStreamConsistent(api: Api, sql: postgres.Sql, tableId: string, timeoutMs: number, pending?: () => Promise<string | null>, onGivenUp?: (line: string) => void): Promise<Consistent> {
  const deadline = Date.now() + timeoutMs;
  const resume = resumer(api, tableId, onGivenUp);
  const findings: Finding[] = [];
  let checked: Checked | null = null;
  let tries = 0;
  let state = "";
  let awaited: string | null = null;
  let wasQuiet = false;
  while (Date.now() < deadline) {
    const q = await look(api, sql, tableId);
    if (q.unreadable) return { findings: [...findings, q.unreadable], checked, tries };
    if (q.error) await resume();
    if (q.taskAfterSynced && !findings.length) findings.push(q.taskAfterSynced);
    state = q.state;
    wasQuiet ||= q.quiet;
    awaited = q.quiet && pending ? await pending() : null;
    if (q.quiet && awaited === null) {
      tries++;
      checked = await checkServed(api, sql, tableId).catch((e): Checked => ({ rowsChecked: 0, queries: 0, findings: [{ kind: "check_error", detail: String(e) }] }));
      if (!checked.findings.length) return { findings, checked, tries };
    }
    // A failed check took seconds already; a wait for quiet polls faster.
    await Bun.sleep(checked ? 1_000 : 200);
  }
  if (awaited !== null) findings.push({ kind: "heal_not_described", detail: `quiet, but within ${timeoutMs} ms ${awaited}` });
  if (!wasQuiet) findings.push({ kind: "not_caught_up", detail: `sync/status not quiet within ${timeoutMs} ms: ${state}` });
  // Never checked (never quiet, or the account never came): what is served now is still worth knowing.
  checked ??= await checkServed(api, sql, tableId).catch((e): Checked => ({ rowsChecked: 0, queries: 0, findings: [{ kind: "check_error", detail: String(e) }] }));
  return { findings, checked, tries };
}
