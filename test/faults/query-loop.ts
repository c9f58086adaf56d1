// Queries running all through a fault run — across workloads, PUT swaps, kills and restarts.
// Every answer must be 2xx or a docs/api.md#errors error: a 4xx carrying the error body (on a query,
// 409 `vector_table_not_ready` before anything is stored), or 507 `storage_full`. Any other
// answer (a 500 `internal`, a 502 while the fake provider never fails, a 503, a 4xx without the
// error body) is recorded with the moment of the run it happened in. Refused connections are
// expected while no process runs and are only counted. While a cdc feed heals under a running
// process (`strict`), any answer but a 2xx, and a refused connection, is recorded too.
import { prng } from "./schedule.ts";

/** `healing`: an answer that keeps the contract but not the promise that a healing table answers. */
export type Violation = { phase: string; status: number; body: string; healing?: boolean };

const CONTRACT_4XX = new Set([
  "validation_error", "invalid_request", "unauthorized", "insufficient_permission", "insufficient_role", "not_found", "name_taken",
  "already_member", "invitation_pending", "in_use", "environment_protected", "backfill_running", "already_paused", "not_paused",
  "organization_deleting", "vector_table_not_ready", "sync_running", "sync_behind", "invitation_expired", "payload_too_large", "rate_limited",
]);

/** Null when the answer keeps the contract; else why not. */
export function contractProblem(status: number, body: any): string | null {
  if (status >= 200 && status < 300) return null;
  const code = body?.error?.code;
  if (status === 507 && code === "storage_full") return null;
  if (status >= 400 && status < 500 && typeof code === "string" && CONTRACT_4XX.has(code) && typeof body.error.message === "string") return null;
  return `status ${status} is not a docs/api.md#errors answer`;
}

/**
 * `strict`: while it answers true the process is known to be up and serving a stored table (a cdc
 * feed healing under it, issue 14): every answer must then be 2xx, and a refused connection or a
 * 4xx such as 409 `vector_table_not_ready` is recorded too.
 */
export type QueryTarget = { url(): string; key(): string; tableId(): string; phase(): string; strict?(): boolean };

export class QueryLoop {
  answered = 0;
  refused = 0;
  readonly byStatus = new Map<number, number>();
  readonly violations: Violation[] = [];
  private running = true;
  private readonly loops: Promise<void>[];

  /** `pauseMs` between a loop's queries: a steady trickle by default, none for a burst. */
  constructor(private readonly target: QueryTarget, seed: number, concurrency = 2, private readonly pauseMs = 10) {
    // Its own PRNG stream: the schedule's draws do not depend on how many queries ran.
    const r = prng(seed ^ 0x5bd1e995);
    this.loops = Array.from({ length: concurrency }, () => this.loop(r));
  }

  private async loop(r: ReturnType<typeof prng>): Promise<void> {
    while (this.running) {
      const url = this.target.url(), id = this.target.tableId();
      if (!url || !id) {
        await Bun.sleep(50);
        continue;
      }
      const body: Record<string, unknown> = { query: `crash row ${r.int(1, 20_000)} ${r.pick(["amber", "silent", "north"])} harp`, limit: r.int(1, 20) };
      if (r.chance(0.3)) body.filters = { category: r.pick(["alpha", "beta", "gamma", "delta"]) };
      const phase = this.target.phase();
      const strict = this.target.strict?.() ?? false;
      try {
        const res = await fetch(`${url}/v1/vector-tables/${id}/query`, {
          method: "POST",
          headers: { authorization: `Bearer ${this.target.key()}`, "content-type": "application/json" },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(30_000),
        });
        const text = await res.text();
        this.answered++;
        this.byStatus.set(res.status, (this.byStatus.get(res.status) ?? 0) + 1);
        let parsed: unknown = null;
        try {
          parsed = JSON.parse(text);
        } catch {}
        const broken = contractProblem(res.status, parsed) !== null;
        if ((broken || (strict && res.status >= 300)) && this.violations.length < 1000) this.violations.push({ phase, status: res.status, body: text.slice(0, 300), healing: !broken });
        // A steady trickle, not a flood: the checks after a restart share the same two cores.
        if (this.pauseMs) await Bun.sleep(this.pauseMs);
      } catch (err) {
        // A query left unanswered is a finding; refused or reset: the process is down or going down.
        if ((err as Error).name === "TimeoutError") this.violations.push({ phase, status: 0, body: "no answer within 30 s" });
        else if (strict && this.violations.length < 1000) this.violations.push({ phase, status: 0, body: String(err).slice(0, 200), healing: true });
        else this.refused++;
        await Bun.sleep(20);
      }
    }
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
  }
}
