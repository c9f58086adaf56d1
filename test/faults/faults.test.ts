// The fault-injection harness in CI (issue 12): a short fixed set of seeds, each a real service
// process on a real Postgres source and the fake emb_a provider, driven by its seeded schedule
// of workloads and interruptions with a restart after each; then the index-file damage and the
// WAL cut. What a failure means and how to replay it: test/faults/README.md.
// Budget: under 2 minutes in all on a loaded 2-core machine.
import { describe, expect, test } from "bun:test";
import { runDamage } from "./damage-run.ts";
import { runSeed, type Report } from "./runner.ts";

/**
 * Chosen from their schedules (every seed starts by killing the first backfill):
 * 10: PUT of columns then SIGTERM once applied; a PUT, then SIGKILL mid re-backfill; DELETE of
 *     a third of the rows, applied, then SIGTERM (issue 12, 1).
 * 13: a PUT 32 → 48 dimensions with a SIGKILL mid-swap; DELETE of a third of the rows, then a
 *     SIGKILL during the shutdown's checkpoint.
 */
const SEEDS = [
  { seed: 10, rows: 1_000, cycles: 3 },
  { seed: 13, rows: 1_500, cycles: 3 },
];
/** Short: a table that does not catch up fails in 30 s rather than holding CI for minutes. */
const CATCH_UP_MS = 30_000;

const log = process.env.VECSYNC_FAULTS_VERBOSE ? (line: string) => console.log(line) : undefined;

/** One line per failure, so the test output names the seed, cycle and what broke. */
const failuresOf = (r: Report) => r.failures.map((f) => `seed ${f.seed} cycle ${f.cycle} ${f.kind}: ${f.detail.slice(0, 300)}`);

describe("seeded schedules", () => {
  test.each(SEEDS)("seed $seed ($rows rows, $cycles cycles): every restart serves every row, nothing deleted, no 5xx", async ({ seed, rows, cycles }) => {
    const report = await runSeed({ seed, rows, cycles, catchUpMs: CATCH_UP_MS, log });
    expect(failuresOf(report)).toEqual([]);
    expect(report.cycles).toBe(cycles);
    expect(report.rowsChecked).toBeGreaterThan(0);
  }, 90_000);
});

describe("damage", () => {
  test("each index-file damage and a WAL cut mid-frame: starts, answers, every row findable", async () => {
    const report = await runDamage({ rows: 400, catchUpMs: CATCH_UP_MS, log });
    expect(failuresOf(report)).toEqual([]);
    expect(report.rowsChecked).toBeGreaterThan(0);
  }, 120_000);
});
