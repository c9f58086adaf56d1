// What the seeded runner and the damage run share: the report, failures as they happen, the
// query loop running throughout, and "restart, then check" (listening and /readyz 200 within
// 30 s; synced and caught up; every row served as the source says).
import { checkServed, waitCaughtUp, type Finding } from "./checker.ts";
import { QueryLoop } from "./query-loop.ts";
import type { FaultWorld } from "./world.ts";

export type Failure = Finding & { seed: number; cycle: number };
export type Report = { seed: number; rows: number; cycles: number; restarts: number; kills: number; rowsChecked: number; queries: number; loopAnswers: number; failures: Failure[]; ms: number };

export class Run {
  readonly report: Report;
  cycle = 0;
  phase = "provisioning";
  private readonly loops: QueryLoop[] = [];
  private readonly t0 = Date.now();

  constructor(readonly world: FaultWorld, seed: number, readonly catchUpMs: number, readonly log: (line: string) => void) {
    this.report = { seed, rows: world.rows, cycles: 0, restarts: 0, kills: 0, rowsChecked: 0, queries: 0, loopAnswers: 0, failures: [], ms: 0 };
    this.loops.push(new QueryLoop(this.target(), seed));
  }

  private target() {
    const w = this.world;
    return { url: () => w.url, key: () => w.key, tableId: () => w.tableId, phase: () => this.phase };
  }

  /** Runs `fn` under 4 more queries in flight, back to back (a swap under load: issue 12, 3). */
  async underLoad<T>(fn: () => Promise<T>): Promise<T> {
    const burst = new QueryLoop(this.target(), this.report.seed + this.cycle * 7919, 4, 0);
    try {
      return await fn();
    } finally {
      await burst.stop();
      this.loops.push(burst);
    }
  }

  fail = (kind: string, detail: string): void => {
    this.report.failures.push({ seed: this.report.seed, cycle: this.cycle, kind, detail: `[${this.phase}] ${detail}` });
    this.log(`  FAIL seed ${this.report.seed} cycle ${this.cycle} ${kind}: ${detail.slice(0, 400)}`);
  };

  /** Many rows can fail one way at once: one failure per kind, with a count and the first examples. */
  private failGrouped(findings: Finding[]): void {
    const kinds = new Map<string, string[]>();
    for (const f of findings) kinds.set(f.kind, [...(kinds.get(f.kind) ?? []), f.detail]);
    for (const [kind, details] of kinds) this.fail(kind, `${details.length}×: ${details.slice(0, 3).join(" ; ")}`);
  }

  /**
   * A process found dead that nobody killed (a native abort or segfault while serving, issue 12,
   * 8): reported once, with how it died. Answers whether it is alive.
   */
  checkAlive(): boolean {
    const s = this.world.service;
    if (!s || s.alive()) return true;
    if (!this.reportedDead.has(s)) this.fail("process_died", s.death());
    this.reportedDead.add(s);
    return false;
  }

  private readonly reportedDead = new WeakSet<object>();

  /** Starts a process on the data dir and checks it; false when it could not start or died. */
  async restartAndCheck(label: string): Promise<boolean> {
    this.phase = `${label}: restart`;
    const started = await this.world.start();
    this.report.restarts++;
    if (!started.ok) return (this.fail("failed_start", started.problem), false);
    this.phase = `${label}: check`;
    const readyMs = Date.now();
    // Passes counted from now: after the restart, so after every write made before it.
    const waited = await waitCaughtUp(this.world.api, this.world.tableId, readyMs, this.catchUpMs);
    const caughtUpMs = Date.now();
    // A refused or reset connection may be the process dying: give its exit a moment to show.
    if (waited.some((f) => f.kind === "table_unreadable")) await Promise.race([this.world.service?.proc.exited, Bun.sleep(1_000)]);
    if (!this.checkAlive()) return false;
    for (const f of waited) this.fail(f.kind, f.detail);
    if (waited.some((f) => f.kind === "not_caught_up" || f.kind === "table_unreadable")) return true;
    const checked = await checkServed(this.world.api, this.world.pg.sql, this.world.tableId);
    this.report.rowsChecked += checked.rowsChecked;
    this.report.queries += checked.queries;
    if (!this.checkAlive()) return false;
    this.failGrouped(checked.findings);
    this.log(`  ${label}: ready in ${started.ms} ms, caught up in ${caughtUpMs - readyMs} ms, ${checked.rowsChecked} rows checked in ${Date.now() - caughtUpMs} ms, ${checked.findings.length} findings`);
    return true;
  }

  /** Stops the query loop and folds its violations into the report (one failure per status and phase). */
  async finish(): Promise<Report> {
    this.phase = "done";
    await Promise.all(this.loops.map((l) => l.stop()));
    this.report.loopAnswers = this.loops.reduce((a, l) => a + l.answered, 0);
    const grouped = new Map<string, { n: number; body: string }>();
    for (const v of this.loops.flatMap((l) => l.violations)) {
      const key = `${v.status} during ${v.phase}`;
      grouped.set(key, { n: (grouped.get(key)?.n ?? 0) + 1, body: grouped.get(key)?.body ?? v.body });
    }
    for (const [key, g] of grouped) this.report.failures.push({ seed: this.report.seed, cycle: -1, kind: "query_not_contract", detail: `${g.n}× ${key}: ${g.body}` });
    this.report.kills = this.world.kills;
    this.report.restarts += this.world.restarts;
    this.report.ms = Date.now() - this.t0;
    return this.report;
  }
}
