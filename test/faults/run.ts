// What the seeded runner and the damage run share: the report, failures as they happen, the
// query loop running throughout, and "restart, then check" (listening and /readyz 200 within
// 30 s; synced and caught up; every row served as the source says). A cdc world also watches
// sync/status throughout (status-watch.ts), decides "caught up" by cdc-catchup.ts, and checks a
// feed fault healed by the running process the same way, without a restart.
import { waitStreamConsistent, waitStreamQuiet } from "./cdc-catchup.ts";
import { checkServed, GIVEN_UP_BY_KILLS, waitCaughtUp, type Checked, type Finding } from "./checker.ts";
import { QueryLoop } from "./query-loop.ts";
import { StatusWatch, type Sighting } from "./status-watch.ts";
import type { FaultWorld } from "./world.ts";

export type Failure = Finding & { seed: number; cycle: number };
/** `feedFaults`: the cdc feed faults applied, by kind, "(down)" when done between a SIGTERM and the restart. */
/** `givenUp`: fill tasks that kills exhausted (CONTRACT 8: table `error`), resumed by a POST backfill as a user would. */
export type Report = { seed: number; rows: number; cycles: number; restarts: number; kills: number; rowsChecked: number; queries: number; loopAnswers: number; feedFaults: string[]; givenUp: number; failures: Failure[]; ms: number };

export class Run {
  readonly report: Report;
  cycle = 0;
  phase = "provisioning";
  /**
   * A feed fault applied to the running process and not yet healed: queries must then answer 200
   * (the process never went away), and an `error` status is `error_during_heal`.
   */
  healing = false;
  /**
   * Set before a feed fault is applied: from where the watch's messages tell of it (logged), and
   * `re`, what sync/status's last_error must have said once it healed (null: not certain to heal).
   */
  account: { re: RegExp | null; mark: number } | null = null;
  readonly watch: StatusWatch | null = null;
  private readonly loops: QueryLoop[] = [];
  private readonly t0 = Date.now();

  constructor(readonly world: FaultWorld, seed: number, readonly catchUpMs: number, readonly log: (line: string) => void) {
    this.report = { seed, rows: world.rows, cycles: 0, restarts: 0, kills: 0, rowsChecked: 0, queries: 0, loopAnswers: 0, feedFaults: [], givenUp: 0, failures: [], ms: 0 };
    this.loops.push(new QueryLoop(this.target(), seed));
    if (world.cdc) this.watch = new StatusWatch(this.target(), this.sawError);
  }

  private target() {
    const w = this.world;
    return { url: () => w.url, key: () => w.key, tableId: () => w.tableId, phase: () => this.phase, strict: () => this.healing };
  }

  /** One failure per phase: a table that sits in `error` is seen ten times a second. */
  private readonly errorPhases = new Set<string>();
  private sawError = (s: Sighting): void => {
    // Kills exhausted a fill: the `error` CONTRACT 8 asks for, resumed once caught up is awaited.
    if (s.lastError && GIVEN_UP_BY_KILLS.test(s.lastError)) return;
    if (this.errorPhases.has(s.phase)) return;
    this.errorPhases.add(s.phase);
    this.fail(this.healing ? "error_during_heal" : "error_status", `sync/status read error, last_error ${JSON.stringify(s.lastError)}`);
  };

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

  /** A fill task exhausted by kills and resumed (checker.ts resumeIfGivenUpByKills): logged and counted, not a failure. */
  private givenUp = (line: string): void => {
    this.report.givenUp++;
    this.log(`    ${line}`);
  };

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
    return this.check(label, `ready in ${started.ms} ms`);
  }

  /** A feed fault applied to the running process: no restart, the same checks. */
  async healAndCheck(label: string): Promise<boolean> {
    try {
      return await this.check(label, "no restart");
    } finally {
      this.healing = false;
    }
  }

  /** The workloads applied ("settle" before a SIGTERM): two passes (batch), or quiet (cdc). */
  async settle(): Promise<Finding[]> {
    const w = this.world;
    return w.cdc ? waitStreamQuiet(w.api, w.pg.sql, w.tableId, this.catchUpMs, this.givenUp) : waitCaughtUp(w.api, w.tableId, Date.now(), this.catchUpMs, this.givenUp);
  }

  private async check(label: string, how: string): Promise<boolean> {
    try {
      return await this.checkOnce(label, how);
    } finally {
      this.account = null; // asked of this heal only
    }
  }

  private async checkOnce(label: string, how: string): Promise<boolean> {
    this.phase = `${label}: check`;
    const readyMs = Date.now();
    const { waited, checked, tries } = await this.caughtUp(readyMs);
    const caughtUpMs = Date.now();
    // A refused or reset connection may be the process dying: give its exit a moment to show.
    if (waited.some((f) => f.kind === "table_unreadable")) await Promise.race([this.world.service?.proc.exited, Bun.sleep(1_000)]);
    if (!this.checkAlive()) return false;
    for (const f of waited) this.fail(f.kind, f.detail);
    if (!checked) return true;
    this.report.rowsChecked += checked.rowsChecked;
    this.report.queries += checked.queries;
    if (!this.checkAlive()) return false;
    this.failGrouped(checked.findings);
    const said = this.account ? this.watch?.messagesSince(this.account.mark) ?? [] : [];
    const heal = said.length ? `; last_error said ${said.map((m) => JSON.stringify(m.slice(0, 240))).join(", then ")}` : "";
    this.log(`  ${label}: ${how}, caught up in ${caughtUpMs - readyMs} ms${tries > 1 ? ` (${tries} checks)` : ""}, ${checked.rowsChecked} rows checked, ${checked.findings.length} findings${heal}`);
    return true;
  }

  /**
   * Batch: two passes after the restart, then the checks. cdc: quiet and the checks passing within
   * the limit (cdc-catchup.ts), and a healed feed's account in last_error.
   */
  private async caughtUp(sinceMs: number): Promise<{ waited: Finding[]; checked: Checked | null; tries: number }> {
    const w = this.world;
    if (!w.cdc) {
      const waited = await waitCaughtUp(w.api, w.tableId, sinceMs, this.catchUpMs, this.givenUp);
      if (waited.some((f) => f.kind === "not_caught_up" || f.kind === "table_unreadable")) return { waited, checked: null, tries: 0 };
      const checked = await checkServed(w.api, w.pg.sql, w.tableId);
      return { waited, checked, tries: 1 };
    }
    const account = this.account;
    const pending = account?.re && (async () => {
      await this.watch?.poll();
      const said = this.watch?.messagesSince(account.mark) ?? [];
      return said.some((m) => account.re!.test(m)) ? null : `no last_error matching ${account.re} (said: ${JSON.stringify(said).slice(0, 600)})`;
    });
    const r = await waitStreamConsistent(w.api, w.pg.sql, w.tableId, this.catchUpMs, pending ?? undefined, this.givenUp);
    return { waited: r.findings, checked: r.checked, tries: r.tries };
  }

  /** Stops the query loop and folds its violations into the report (one failure per status and phase). */
  async finish(): Promise<Report> {
    this.phase = "done";
    await Promise.all([...this.loops.map((l) => l.stop()), this.watch?.stop()]);
    this.report.loopAnswers = this.loops.reduce((a, l) => a + l.answered, 0);
    const grouped = new Map<string, { kind: string; n: number; body: string }>();
    for (const v of this.loops.flatMap((l) => l.violations)) {
      // A contract answer (a 409, a refusal) that a table healing in a running process must not give.
      const kind = v.healing ? "query_refused_during_heal" : "query_not_contract";
      const key = `${kind}: ${v.status} during ${v.phase}`;
      grouped.set(key, { kind, n: (grouped.get(key)?.n ?? 0) + 1, body: grouped.get(key)?.body ?? v.body });
    }
    for (const [key, g] of grouped) this.report.failures.push({ seed: this.report.seed, cycle: -1, kind: g.kind, detail: `${g.n}× ${key.slice(g.kind.length + 2)}: ${g.body}` });
    this.report.kills = this.world.kills;
    this.report.restarts += this.world.restarts;
    this.report.ms = Date.now() - this.t0;
    return this.report;
  }
}
