// End-to-end helpers: a client of the real process over HTTP (sign-in through the outbox, an
// organization, then the API key), and the brute-force expectation of a query computed in the
// test from the source rows with the same `local` model code the service runs.
//
// The rendering (docs/vector-tables.md#text-and-metadata) is written out here again on purpose, rather than imported from
// render.ts: the test states what the contract says, so a rendering bug cannot hide behind itself.
import { expect } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { lexicalVector } from "../../src/drivers/embeddings/local.ts";
import { eventually, startProcess, type RunningProcess } from "../harness.ts";

export type Answer = { status: number; body: any };

export type Api = {
  url: string;
  call(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Answer>;
};

export function apiOf(url: string, auth: Record<string, string> = {}): Api {
  return {
    url,
    async call(method, path, body, headers = {}) {
      const init: RequestInit = { method, headers: { ...auth, ...headers } };
      if (body !== undefined) {
        init.body = JSON.stringify(body);
        (init.headers as Record<string, string>)["content-type"] = "application/json";
      }
      const res = await fetch(`${url}${path}`, init);
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : null };
    },
  };
}

/** Throws with the whole answer when the status is not the one expected. */
export function must(answer: Answer, status: number): any {
  if (answer.status !== status) throw new Error(`expected ${status}, got ${answer.status}: ${JSON.stringify(answer.body)}`);
  return answer.body;
}

/** The service as a real child process, with short sync intervals. */
export function startService(env: Record<string, string> = {}): Promise<RunningProcess> {
  return startProcess({ env: { VECSYNC_SYNC_INTERVAL: "1", VECSYNC_CDC_POLL_MS: "200", VECSYNC_LOG_LEVEL: "warn", ...env } });
}

function latestCode(outboxPath: string, email: string, after: number): string | null {
  if (!existsSync(outboxPath)) return null;
  const mails = readFileSync(outboxPath, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l) as { to: string; text: string });
  const mine = mails.filter((m) => m.to === email);
  if (mine.length <= after) return null;
  return mine.at(-1)!.text.match(/\b(\d{6})\b/)?.[1] ?? null;
}

/** otp → code from the process's outbox → verify → POST /v1/organizations: an API key client. */
export async function signUp(proc: RunningProcess, email = `e2e-${crypto.randomUUID().slice(0, 8)}@example.com`): Promise<{ api: Api; orgId: string; apiKey: string; jwt: Api }> {
  const anon = apiOf(proc.url);
  const outbox = join(proc.dataDir, "outbox.jsonl");
  must(await anon.call("POST", "/v1/auth/otp", { email }), 200);
  const code = await eventually(() => latestCode(outbox, email, 0), 5_000);
  const tokens = must(await anon.call("POST", "/v1/auth/verify", { email, code }), 200);
  expect(tokens.token_type.toLowerCase()).toBe("bearer");
  const jwt = apiOf(proc.url, { authorization: `Bearer ${tokens.access_token}` });
  const created = must(await jwt.call("POST", "/v1/organizations", { name: `e2e-${crypto.randomUUID().slice(0, 8)}` }), 201);
  return { api: apiOf(proc.url, { authorization: `Bearer ${created.api_key}` }), orgId: created.organization.id, apiKey: created.api_key, jwt };
}

// ---- the brute-force expectation ----

export type FilterType = "keyword" | "integer" | "float" | "boolean";
export type Column = { name: string; role: "embedding" | "metadata"; ordinal?: number; name_prefix?: string; filter_type?: FilterType };
export type Row = Record<string, string | number | boolean | null>;
export type Config = { columns: Column[]; dimensions: number; pk: string };

/** docs/vector-tables.md#text-and-metadata: embedding columns by ordinal then position, `prefix + value`, nulls skipped, "\n". */
export function embeddedText(columns: Column[], row: Row): string | null {
  const parts = columns
    .map((c, position) => ({ c, position }))
    .filter(({ c }) => c.role === "embedding")
    .sort((a, b) => (a.c.ordinal ?? Infinity) - (b.c.ordinal ?? Infinity) || a.position - b.position)
    .filter(({ c }) => row[c.name] !== null && row[c.name] !== undefined)
    .map(({ c }) => (c.name_prefix ?? "") + String(row[c.name]));
  return parts.length ? parts.join("\n") : null;
}

export function metadataOf(columns: Column[], row: Row): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const c of columns.filter((c) => c.role === "metadata")) {
    const v = row[c.name] ?? null;
    out[c.name] = v === null ? null : c.filter_type === "keyword" ? String(v) : c.filter_type === "boolean" ? Boolean(v) : Number(v);
  }
  return out;
}

function dot(a: Float32Array, b: Float32Array): number {
  let d = 0, na = 0, nb = 0;
  for (let i = 0; i < a.length; i++) (d += a[i]! * b[i]!), (na += a[i]! * a[i]!), (nb += b[i]! * b[i]!);
  return d / Math.sqrt(na * nb);
}

export type Expected = { id: string; score: number; metadata: Record<string, unknown>; embedded_text: string };
export type QueryBody = { query: string; limit?: number; min_similarity_score?: number; filters?: unknown };

/** Every row with text passing `where`, scored, best first, ties by numeric primary key. */
export function bruteForce(config: Config, rows: Row[], body: QueryBody, where: (r: Row) => boolean = () => true): Expected[] {
  const q = lexicalVector(body.query, config.dimensions);
  return rows
    .map((r) => ({ r, text: embeddedText(config.columns, r) }))
    .filter((x) => x.text !== null && where(x.r))
    .map(({ r, text }) => ({ id: String(r[config.pk]), score: dot(q, lexicalVector(text!, config.dimensions)), metadata: metadataOf(config.columns, r), embedded_text: text! }))
    .filter((x) => x.score >= (body.min_similarity_score ?? -Infinity))
    .sort((a, b) => b.score - a.score || Number(a.id) - Number(b.id))
    .slice(0, body.limit ?? 10);
}

/** Null when the answer is exactly the expectation; otherwise what differs (for messages and polling). */
export function mismatch(answer: Answer, expected: Expected[]): string | null {
  if (answer.status !== 200) return `status ${answer.status}: ${JSON.stringify(answer.body)}`;
  const got = answer.body.results as { id: string; similarity_score: number; metadata: unknown; embedded_text: string }[];
  if (answer.body.total_results !== got.length) return `total_results ${answer.body.total_results} ≠ ${got.length} results`;
  const ids = got.map((g) => g.id).join(","), want = expected.map((e) => e.id).join(",");
  if (ids !== want) return `ids [${ids}] ≠ expected [${want}]`;
  for (let i = 0; i < got.length; i++) {
    const g = got[i]!, e = expected[i]!;
    if (Math.abs(g.similarity_score - e.score) > 1e-3) return `score of ${g.id}: ${g.similarity_score} ≠ ${e.score}`;
    if (g.embedded_text !== e.embedded_text) return `text of ${g.id}: ${JSON.stringify(g.embedded_text)} ≠ ${JSON.stringify(e.embedded_text)}`;
    if (JSON.stringify(g.metadata) !== JSON.stringify(e.metadata)) return `metadata of ${g.id}: ${JSON.stringify(g.metadata)} ≠ ${JSON.stringify(e.metadata)}`;
  }
  return null;
}

/** A probe: a query body and the predicate its filters mean. */
export type Probe = { body: QueryBody; where?: (r: Row) => boolean };

export async function probe(api: Api, tableId: string, p: Probe, config: Config, rows: Row[]): Promise<string | null> {
  const answer = await api.call("POST", `/v1/vector-tables/${tableId}/query`, p.body);
  const problem = mismatch(answer, bruteForce(config, rows, p.body, p.where));
  if (problem === null) expect(answer.body).toMatchObject({ query: p.body.query, model: "local-lexical-v1" });
  return problem && `${JSON.stringify(p.body)}: ${problem}`;
}

/** Polls until every probe answers exactly what the source (read fresh each time) implies. */
export async function eventuallyExact(api: Api, tableId: string, probes: Probe[], config: Config, readRows: () => Promise<Row[]>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: string | null = null;
  for (;;) {
    const rows = await readRows();
    last = null;
    for (const p of probes) {
      last = await probe(api, tableId, p, config, rows);
      if (last) break;
    }
    if (!last) return;
    if (Date.now() > deadline) throw new Error(`not exact within ${timeoutMs} ms: ${last}`);
    await Bun.sleep(50);
  }
}

/** Polls GET /v1/vector-tables/{id} until `sync_status` is one wanted. */
export function eventuallyStatus(api: Api, id: string, status: string, timeoutMs = 15_000): Promise<any> {
  return eventually(async () => {
    const table = must(await api.call("GET", `/v1/vector-tables/${id}`), 200);
    if (table.sync_status === "error") throw new Error(`vector table went to error: ${JSON.stringify((await api.call("GET", `/v1/vector-tables/${id}/sync/status`)).body)}`);
    return table.sync_status === status && table;
  }, timeoutMs, 50);
}
