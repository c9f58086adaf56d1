// The service side of `bun run bench pipeline`: the real process (test/harness.ts startProcess),
// a small REST client signed in over HTTP the way a user is (otp → outbox → verify → org → key),
// and samplers of the process's memory and CPU read from /proc.
import { Database } from "bun:sqlite";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { startProcess, type RunningProcess } from "../../../test/harness.ts";

export type Service = RunningProcess & { pid: number };

/** `logTo`: the service's log (stderr) goes to that file; `cmd`: another command than `bun src/main.ts` (a profiler's). */
export async function startService(env: Record<string, string>, dataDir: string, logTo?: string, cmd?: string[]): Promise<Service> {
  const running = await startProcess({ env, dataDir, timeoutMs: 60_000, stderrTo: logTo, cmd });
  return Object.assign(running, { pid: running.proc.pid });
}

import { Api } from "./api.ts";

export { Api };

/** The 6-digit code of the latest mail to `email` in the service's JSON-lines outbox. */
async function codeFromOutbox(dataDir: string, email: string): Promise<string> {
  const path = join(dataDir, "outbox.jsonl");
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (existsSync(path)) {
      const mails = readFileSync(path, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l) as { to: string; text: string });
      const code = mails.filter((m) => m.to === email).at(-1)?.text.match(/\b(\d{6})\b/)?.[1];
      if (code) return code;
    }
    await Bun.sleep(20);
  }
  throw new Error(`no sign-in code for ${email} in ${path}`);
}

/** Signs in over HTTP, creates an organization, and answers a client carrying its API key. */
export async function signUp(service: Service): Promise<{ api: Api; orgId: string }> {
  const anon = new Api(service.url);
  const email = `bench-${crypto.randomUUID().slice(0, 8)}@example.com`;
  await anon.call("POST", "/v1/auth/otp", { email });
  const code = await codeFromOutbox(service.dataDir, email);
  const tokens = await anon.call<{ access_token: string }>("POST", "/v1/auth/verify", { email, code });
  const jwt = anon.withHeaders({ authorization: `Bearer ${tokens.access_token}` });
  const created = await jwt.call<{ organization: { id: string }; api_key: string }>("POST", "/v1/organizations", { name: `bench-${crypto.randomUUID().slice(0, 8)}` });
  return { api: anon.withHeaders({ authorization: `Bearer ${created.api_key}` }), orgId: created.organization.id };
}

/** A field of /proc/<pid>/status in kB (VmRSS: now, VmHWM: the peak since the process started). */
export function procStatusKb(pid: number, field: "VmRSS" | "VmHWM"): number {
  try {
    const m = readFileSync(`/proc/${pid}/status`, "utf8").match(new RegExp(`^${field}:\\s+(\\d+) kB`, "m"));
    return m ? Number(m[1]) : NaN;
  } catch {
    return NaN;
  }
}

/** User + system CPU seconds the process has used (/proc/<pid>/stat fields 14 and 15). */
export function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100; // clock ticks; 100 Hz on Linux
  } catch {
    return NaN;
  }
}

/**
 * CPU seconds used so far by the processes that share the machine during a backfill: the service,
 * this bench process (the fake provider and the prober), and PostgreSQL (every process named
 * postgres: its backends, walwriter, checkpointer). Read twice, the difference shows where a
 * row's CPU went, beside raw usearch's own build on the same 2 cores.
 */
export function cpuSplit(servicePid: number): { service: number; bench: number; postgres: number } {
  let postgres = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, "utf8").trim() === "postgres") postgres += cpuSeconds(Number(entry)) || 0;
    } catch {
      // the process ended meanwhile
    }
  }
  const own = process.cpuUsage();
  return { service: cpuSeconds(servicePid), bench: (own.user + own.system) / 1e6, postgres };
}

/** Samples VmRSS every `everyMs` and keeps the largest seen, per phase (reset) and overall. */
export class RssSampler {
  private timer: ReturnType<typeof setInterval>;
  phasePeakKb = 0;
  constructor(private readonly pid: number, everyMs = 250) {
    this.timer = setInterval(() => this.sample(), everyMs);
  }
  sample(): void {
    const kb = procStatusKb(this.pid, "VmRSS");
    if (kb > this.phasePeakKb) this.phasePeakKb = kb;
  }
  resetPhase(): void {
    this.phasePeakKb = procStatusKb(this.pid, "VmRSS");
  }
  stop(): void {
    clearInterval(this.timer);
  }
}

/** Waits until the process has used under 5 % of a core for `quietMs` (no sync pass running). */
export async function waitIdle(pid: number, quietMs = 1500, timeoutMs = 120_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const before = cpuSeconds(pid);
    await Bun.sleep(quietMs);
    if ((cpuSeconds(pid) - before) / (quietMs / 1000) < 0.05) return true;
  }
  return false;
}

export const mb = (kb: number) => (Number.isFinite(kb) ? `${Math.round(kb / 1024)} MB` : "n/a");

/** The pass's own start and end as the service recorded them (its database, read-only). */
export function passTimes(dataDir: string, id: string): { started: string | null; finished: string | null } {
  const db = new Database(join(dataDir, "vecsync.db"), { readonly: true });
  try {
    const row = db.query("SELECT last_sync_started_at AS started, last_sync_at AS finished FROM vector_tables WHERE id = ?").get(id) as { started: string | null; finished: string | null } | null;
    return row ?? { started: null, finished: null };
  } finally {
    db.close();
  }
}
