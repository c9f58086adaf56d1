// `bun run bench auth [requests]`: sign-in round trip (otp → code from the outbox → verify) and an
// API-key-authenticated GET (/v1/api-keys), against the real service process on loopback, one
// request at a time; GET /healthz (no credential) is the baseline measured in the same run.
import { closeSync, fstatSync, openSync, readSync, watch, type FSWatcher } from "node:fs";
import { join } from "node:path";
import { startProcess, tempDir } from "../../test/harness.ts";

const REQUESTS = Number(process.argv[3] ?? 2000);
const WARMUP = 50;

type Stats = { n: number; median: number; p99: number; mean: number };

function stats(samples: number[]): Stats {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!;
  return { n: sorted.length, median: at(0.5), p99: at(0.99), mean: sorted.reduce((s, x) => s + x, 0) / sorted.length };
}

const fmt = (s: Stats) => `median ${s.median.toFixed(2)} ms  p99 ${s.p99.toFixed(2)} ms  mean ${s.mean.toFixed(2)} ms  (n=${s.n})`;

/**
 * Follows the JSON-lines outbox from where it was last read; codes arrive just after the otp
 * answer. Woken by inotify (fs.watch) rather than polling, so waiting burns no CPU the service needs.
 */
class OutboxTail {
  #fd: number;
  #offset = 0;
  #pending = "";
  #codes = new Map<string, string>();
  #wake: (() => void) | null = null;
  #watcher: FSWatcher;
  constructor(path: string) {
    this.#fd = openSync(path, "a+");
    this.#watcher = watch(path, () => this.#wake?.());
  }
  #read(): void {
    const size = fstatSync(this.#fd).size;
    if (size <= this.#offset) return;
    const buf = Buffer.alloc(size - this.#offset);
    this.#offset += readSync(this.#fd, buf, 0, buf.length, this.#offset);
    const lines = (this.#pending + buf.toString("utf8")).split("\n");
    this.#pending = lines.pop()!;
    for (const line of lines) {
      const mail = JSON.parse(line) as { to: string; text: string };
      const code = mail.text.match(/\b(\d{6})\b/)?.[1];
      if (code) this.#codes.set(mail.to, code);
    }
  }
  async codeFor(email: string, timeoutMs = 5_000): Promise<string> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      this.#read();
      const code = this.#codes.get(email);
      if (code) {
        this.#codes.delete(email);
        return code;
      }
      if (performance.now() > deadline) throw new Error(`no code for ${email} within ${timeoutMs} ms`);
      // A change event, or a 10 ms safety net in case one is coalesced away.
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 10);
        this.#wake = () => (clearTimeout(timer), resolve());
      });
      this.#wake = null;
    }
  }
  close(): void {
    this.#watcher.close();
    closeSync(this.#fd);
  }
}

async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
}

async function expectOk(res: Response, what: string): Promise<unknown> {
  if (!res.ok) throw new Error(`${what} answered ${res.status}: ${await res.text()}`);
  return res.json();
}

async function timedGets(url: string, headers: Record<string, string>, n: number): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < n + WARMUP; i++) {
    const start = performance.now();
    const res = await fetch(url, { headers });
    await res.arrayBuffer();
    if (!res.ok) throw new Error(`GET ${url} answered ${res.status}`);
    if (i >= WARMUP) samples.push(performance.now() - start);
  }
  return samples;
}

using dir = tempDir("vecsync-bench-");
const outboxPath = join(dir.path, "outbox.jsonl");
// Distinct e-mails keep each under its 5-per-15-minutes limit; the per-IP limit is lifted.
await using service = await startProcess({ dataDir: join(dir.path, "data"), env: { VECSYNC_MAIL_OUTBOX: outboxPath, VECSYNC_OTP_IP_LIMIT: "1000000", VECSYNC_LOG_LEVEL: "warn" } });
const tail = new OutboxTail(outboxPath);
const run = Date.now().toString(36);

console.log(`vecsync auth bench: ${REQUESTS} requests each, sequential, loopback (${service.url})`);
const baseline = stats(await timedGets(`${service.url}/healthz`, {}, REQUESTS));
console.log(`baseline GET /healthz                 ${fmt(baseline)}`);

const roundTrips: number[] = [];
const otpAnswers: number[] = [];
const verifyAnswers: number[] = [];
let accessToken = "";
for (let i = 0; i < REQUESTS + WARMUP; i++) {
  const email = `bench-${run}-${i}@example.com`;
  const start = performance.now();
  await expectOk(await post(`${service.url}/v1/auth/otp`, { email }), "otp");
  const otpDone = performance.now();
  const code = await tail.codeFor(email);
  const verifyStart = performance.now();
  const tokens = (await expectOk(await post(`${service.url}/v1/auth/verify`, { email, code }), "verify")) as { access_token: string };
  const end = performance.now();
  accessToken = tokens.access_token;
  if (i < WARMUP) continue;
  roundTrips.push(end - start);
  otpAnswers.push(otpDone - start);
  verifyAnswers.push(end - verifyStart);
}
tail.close();
console.log(`sign-in round trip (otp→mail→verify)  ${fmt(stats(roundTrips))}`);
console.log(`  POST /v1/auth/otp answer            ${fmt(stats(otpAnswers))}`);
console.log(`  POST /v1/auth/verify answer         ${fmt(stats(verifyAnswers))}`);

const created = await post(`${service.url}/v1/organizations`, { name: `bench-${run}` }, { authorization: `Bearer ${accessToken}` });
if (created.status !== 201) {
  console.log(`API-key GET skipped: POST /v1/organizations answered ${created.status} (${await created.text()})`);
} else {
  const { api_key } = (await created.json()) as { api_key: string };
  const keyed = stats(await timedGets(`${service.url}/v1/api-keys`, { authorization: `Bearer ${api_key}` }, REQUESTS));
  console.log(`GET /v1/api-keys with an API key      ${fmt(keyed)}`);
}
