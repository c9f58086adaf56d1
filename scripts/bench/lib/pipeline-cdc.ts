// The cdc phase of `bun run bench pipeline`: writers commit paced UPDATEs to the cdc source table
// while a prober asks the query endpoint, over and over, which of the committed revisions it can
// see. What is measured, per transaction:
//   commit    = Date.now() right after the UPDATE's COMMIT is acknowledged to the bench;
//   queryable = Date.now() when a query answer arrives that holds one of that transaction's rows
//               with the new revision in its metadata AND the new text in `embedded_text`.
// So latency = commit → first answer proving the change is searchable; it over-states by up to
// one probe round trip (reported as the probe period). Every transaction is tracked (none
// sampled away); transactions never seen by the end of the drain count as missing.
import type postgres from "postgres";
import { percentile } from "./measure.ts";
import type { Api } from "./pipeline-service.ts";

/** `revBase`: revisions are numbered from revBase + 1 (a later run never matches an earlier one's rows). */
export type CdcLoad = { changesPerSec: number; rowsPerTxn: number; durationMs: number; drainMs: number; revBase?: number };

export type CdcResult = {
  txns: number;
  rows: number;
  seen: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  /** Mean round trip of one probe query: the resolution of the latency figures. */
  probePeriodMs: number;
  /** Probe queries asked: each embeds its query text once (no query cache), so each is one embedding input. */
  probes: number;
  maxRowsPending: number;
  maxStalenessSecs: number;
  sustainedPerSec: number;
  /** Transactions slower than 250 ms: commit time (epoch ms) and latency, for reading beside the service's log. */
  slow: { at: number; ms: number }[];
};

/** Revision `rev` (from 1) rewrites rows (rev-1)·k+1 … rev·k: each row at most once per run. */
export function rowsOf(rev: number, rowsPerTxn: number): number[] {
  return Array.from({ length: rowsPerTxn }, (_, j) => (rev - 1) * rowsPerTxn + j + 1);
}

export async function runCdcLoad(sql: postgres.Sql, api: Api, tableId: string, tableRows: number, load: CdcLoad): Promise<CdcResult> {
  const committedAt = new Map<number, number>();
  const latency = new Map<number, number>();
  let writing = true;
  let probes = 0;
  let probeMs = 0;
  let maxRowsPending = 0;
  let maxStalenessSecs = 0;

  const txnPerSec = load.changesPerSec / load.rowsPerTxn;
  const writer = (async () => {
    const started = performance.now();
    const base = load.revBase ?? 0;
    let rev = base;
    // Stops before a revision would rewrite a row an earlier one changed (it would hide it).
    while (performance.now() - started < load.durationMs && (rev - base + 1) * load.rowsPerTxn <= tableRows) {
      rev++;
      const ids = rowsOf(rev - base, load.rowsPerTxn);
      await sql`UPDATE cdc_docs SET body = ${`changed in revision ${rev} of the cdc bench`}, rev = ${rev} WHERE id IN ${sql(ids)}`;
      committedAt.set(rev, Date.now());
      const due = started + ((rev - base) * 1000) / txnPerSec;
      if (due > performance.now()) await Bun.sleep(due - performance.now());
    }
    return { revs: rev - base, ms: performance.now() - started };
  })().finally(() => (writing = false));

  const outstanding = () => [...committedAt.keys()].filter((r) => !latency.has(r)).sort((a, b) => a - b);
  const prober = (async () => {
    let drainUntil = Infinity;
    for (;;) {
      if (!writing && drainUntil === Infinity) drainUntil = Date.now() + load.drainMs;
      const open = outstanding();
      if (!writing && (open.length === 0 || Date.now() > drainUntil)) return;
      if (open.length === 0) {
        await Bun.sleep(2);
        continue;
      }
      // The oldest revisions first: the stream applies in commit order, and `limit` caps rows.
      const revs = open.slice(0, Math.floor(100 / load.rowsPerTxn));
      const asked = performance.now();
      const answer = await api.call<{ results: { metadata: { rev: number | null }; embedded_text: string }[] }>(
        "POST",
        `/v1/vector-tables/${tableId}/query`,
        { query: "changed in revision", limit: 100, filters: { rev: { in: revs } } },
      );
      const now = Date.now();
      probes++;
      probeMs += performance.now() - asked;
      for (const r of answer.results) {
        const rev = r.metadata.rev;
        if (rev !== null && !latency.has(rev) && r.embedded_text.includes(`revision ${rev} of`)) latency.set(rev, now - committedAt.get(rev)!);
      }
    }
  })();

  const statusWatch = setInterval(async () => {
    const s = await api.call<{ rows_pending: number; staleness_secs: number }>("GET", `/v1/vector-tables/${tableId}/sync/status`).catch(() => null);
    if (!s) return;
    maxRowsPending = Math.max(maxRowsPending, s.rows_pending);
    maxStalenessSecs = Math.max(maxStalenessSecs, s.staleness_secs);
  }, 500);

  const written = await writer;
  await prober;
  clearInterval(statusWatch);
  const sorted = [...latency.values()].sort((a, b) => a - b);
  return {
    txns: written.revs,
    rows: written.revs * load.rowsPerTxn,
    seen: latency.size,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted.at(-1) ?? NaN,
    probePeriodMs: probeMs / Math.max(1, probes),
    probes,
    maxRowsPending,
    maxStalenessSecs,
    sustainedPerSec: (written.revs * load.rowsPerTxn * 1000) / written.ms,
    slow: [...latency].filter(([, ms]) => ms > 250).map(([rev, ms]) => ({ at: committedAt.get(rev)!, ms })),
  };
}
