// Phase 3 of `bun run bench pipeline`: a cdc table under paced UPDATE load (lib/pipeline-cdc.ts
// measures each transaction's commit → queryable latency). First a warm-up of 2 s at 50 changes/s,
// reported apart; then the operating point —
// 500 changes/s sustained for --cdc-secs (default 60) — then a sweep of higher rates, --sweep-secs
// each (default 20), up the --cdc-rates list until one breaks p99 ≤ 1 s or stops keeping pace:
// the highest rate that held is reported. Each run numbers its revisions after the last run's, so
// a run never finds an earlier run's revision already searchable.
import type postgres from "postgres";
import { progress } from "./measure.ts";
import { runCdcLoad, type CdcLoad, type CdcResult } from "./pipeline-cdc.ts";
import type { Api } from "./pipeline-service.ts";

export type CdcPhaseOptions = { operatingRate: number; operatingSecs: number; sweepRates: number[]; sweepSecs: number; rowsPerTxn: number };

/** Rows the cdc table needs: no run rewrites a row twice. */
export function cdcRowsNeeded(o: CdcPhaseOptions): number {
  const most = Math.max(o.operatingRate * o.operatingSecs, ...o.sweepRates.map((r) => r * o.sweepSecs));
  return Math.ceil(most * 1.2);
}

const num = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString("en-US") : "n/a");

export type CdcRun = { rate: number; result: CdcResult; inputs: number };

export async function runCdcPhase(sql: postgres.Sql, api: Api, tableId: string, tableRows: number, o: CdcPhaseOptions, inputs: () => number, deadline: number) {
  const runs: CdcRun[] = [];
  let revBase = 0;
  const run = async (rate: number, secs: number) => {
    const load: CdcLoad = { changesPerSec: rate, rowsPerTxn: o.rowsPerTxn, durationMs: secs * 1000, drainMs: 30_000, revBase };
    progress(`cdc load: ${rate} changes/s as ${rate / o.rowsPerTxn} txn/s of ${o.rowsPerTxn} rows for ${secs} s`);
    const before = inputs();
    const result = await runCdcLoad(sql, api, tableId, tableRows, load);
    revBase += result.txns;
    runs.push({ rate, result, inputs: inputs() - before });
    progress(`  p50 ${num(result.p50)} ms, p99 ${num(result.p99)} ms, ${num(result.sustainedPerSec)} changes/s sustained, ${result.seen}/${result.txns} seen`);
    return result;
  };
  // Warm-up, not measured: the stream has opened and caught up with the source's WAL (on a
  // shared cluster, everything other databases wrote since the slot was made) before the clock
  // starts. Its figures are reported apart: the first change after a backfill.
  const warm = await runCdcLoad(sql, api, tableId, tableRows, { changesPerSec: 50, rowsPerTxn: o.rowsPerTxn, durationMs: 2_000, drainMs: 30_000, revBase });
  revBase += warm.txns;
  progress(`warm-up (not counted): ${warm.seen}/${warm.txns} seen, first change queryable after ${num(warm.max)} ms at most`);
  const operating = await run(o.operatingRate, o.operatingSecs);
  let highest = holds(operating, o.operatingRate) ? o.operatingRate : null;
  for (const rate of o.sweepRates) {
    if (Date.now() + o.sweepSecs * 1000 + 40_000 > deadline) break;
    const r = await run(rate, o.sweepSecs);
    if (!holds(r, rate)) break;
    highest = Math.round(r.sustainedPerSec);
  }
  return { runs, highest, warmUp: warm };
}

/** p99 ≤ 1 s, every transaction seen, and the writers kept (nearly) the asked pace. */
const holds = (r: CdcResult, rate: number) => r.p99 <= 1000 && r.seen === r.txns && r.sustainedPerSec >= rate * 0.9;

export function cdcRows(phase: { runs: CdcRun[]; highest: number | null; warmUp: CdcResult }): (string | number)[][] {
  const w = phase.warmUp;
  const rows: (string | number)[][] = [["cdc warm-up (not counted)", `p50 ${num(w.p50)} ms, max ${num(w.max)} ms`, "50 changes/s for 2 s", `${w.seen}/${w.txns} txns seen`]];
  for (const [i, { rate, result: r, inputs }] of phase.runs.entries()) {
    const label = i === 0 ? `cdc ${rate}/s commit → queryable` : `  sweep ${rate}/s`;
    rows.push([label, `p50 ${num(r.p50)} ms, p90 ${num(r.p90)} ms, p99 ${num(r.p99)} ms, max ${num(r.max)} ms`, `probe round trip ${r.probePeriodMs.toFixed(1)} ms`, `${r.seen}/${r.txns} txns seen`]);
    rows.push(["    load", `${num(r.sustainedPerSec)} changes/s sustained (${num(r.rows)} rows in ${r.txns} txns)`, `${num(inputs - r.probes)} embedding inputs for changes (+ ${num(r.probes)} probe queries)`, `max rows_pending ${r.maxRowsPending}, staleness ${r.maxStalenessSecs} s`]);
  }
  rows.push(["cdc highest rate with p99 ≤ 1 s", phase.highest === null ? "none of the rates tried" : `${num(phase.highest)} changes/s`, "goal ≥ 2,000 changes/s", ""]);
  return rows;
}
