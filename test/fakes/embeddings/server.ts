// A fake embedding provider on a real port, speaking one provider's wire format (wires.ts) with
// deterministic vectors (upstream.ts). Switches, settable at any time, inject latency, 429 bursts
// with Retry-After, 5xx, hangs, malformed answers, wrong counts and wrong dimensions; an optional
// rate limit (requests and tokens per minute, a token bucket like the providers') answers 429
// when exceeded. Every request is recorded for assertions.
import { randomBytes } from "node:crypto";
import { decode, encode, errorBody, FakeHttpError, type Decoded } from "./wires.ts";
import { fakeTokens, fakeTruncate, fakeVector, UPSTREAM, type FakeProvider, type UpstreamModel } from "./upstream.ts";

export type FakeSwitches = {
  latencyMs: number;
  /** Extra random latency in [0, n) ms, so answers come back out of order. */
  latencyJitterMs: number;
  /** The next n requests answer 429 with `retryAfterSec` (null: no header). */
  fail429: number;
  retryAfterSec: number | null;
  /** Also send OpenAI's `retry-after-ms` header with this value (null: not sent). */
  retryAfterMs: number | null;
  /** The next n requests answer 503. */
  fail5xx: number;
  /** The 503s carry `retry-after-ms` with this value (null: no header, the client backs off on its own). */
  retry5xxMs: number | null;
  /** The next n requests never answer (client timeouts). */
  hang: number;
  /** The next n requests answer 200 without the vectors (`{"unexpected": true}`). */
  malformed: number;
  /** The next n requests answer 200 with a body that is not JSON. */
  notJson: number;
  /** The next n requests answer 200 with a null in place of the first vector's first value. */
  nonNumeric: number;
  wrongDimensions: number;
  wrongCount: number;
  /** Answers list items in reverse order (emb_a/emb_c carry `index`). */
  shuffle: boolean;
  rateLimit: { requestsPerMinute: number; tokensPerMinute: number; burstSec: number } | null;
  record: boolean;
  /** emb_a: state the rate limit in x-ratelimit-limit-* headers, as OpenAI does. */
  stateLimits: boolean;
  /** Tighter per-request ceilings than the real provider's (tests of batching). */
  maxInputs: number | null;
  maxRequestTokens: number | null;
  /**
   * emb_a/emb_c and `encoding_format: "base64"`: `honour` answers base64 as the real APIs do;
   * `ignore` answers JSON numbers anyway and `refuse` answers a 400 (in words of its own), as
   * some OpenAI-compatible servers do.
   */
  base64: "honour" | "ignore" | "refuse";
};

export type RecordedRequest = { path: string; key: string | null; body: Record<string, unknown>; decoded: Decoded | null; status: number; atMs: number };

const defaults = (): FakeSwitches => ({
  latencyMs: 0,
  latencyJitterMs: 0,
  fail429: 0,
  retryAfterSec: 1,
  retryAfterMs: null,
  fail5xx: 0,
  retry5xxMs: null,
  hang: 0,
  malformed: 0,
  notJson: 0,
  nonNumeric: 0,
  wrongDimensions: 0,
  wrongCount: 0,
  shuffle: false,
  rateLimit: null,
  record: true,
  stateLimits: false,
  maxInputs: null,
  maxRequestTokens: null,
  base64: "honour",
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The provider side of a rate limit: buckets of `burstSec` worth, refilled continuously. */
class FakeLimiter {
  private req: number;
  private tok: number;
  private last = performance.now();
  constructor(private readonly limit: NonNullable<FakeSwitches["rateLimit"]>) {
    this.req = this.cap(limit.requestsPerMinute);
    this.tok = this.cap(limit.tokensPerMinute);
  }
  private cap = (perMinute: number) => (perMinute * this.limit.burstSec) / 60;
  /** null when admitted, else the seconds to wait. */
  take(tokens: number): number | null {
    const now = performance.now();
    const dt = (now - this.last) / 60_000;
    this.last = now;
    const { requestsPerMinute: rpm, tokensPerMinute: tpm } = this.limit;
    this.req = Math.min(this.cap(rpm), this.req + dt * rpm);
    this.tok = Math.min(this.cap(tpm), this.tok + dt * tpm);
    if (this.req >= 1 && this.tok >= Math.min(tokens, this.cap(tpm))) {
      this.req -= 1;
      this.tok -= tokens;
      return null;
    }
    const waitMin = Math.max((1 - this.req) / rpm, (tokens - this.tok) / tpm);
    return Math.max(1, Math.ceil(waitMin * 60));
  }
}

export type FakeEmbeddings = {
  provider: FakeProvider;
  /** Base URL with the version path, as VECSYNC_EMB_*_URL expects. */
  url: string;
  apiKey: string;
  switches: FakeSwitches;
  requests: RecordedRequest[];
  /** `received` counts requests as they arrive (one in flight is counted before it is answered). */
  counters: { received: number; served: number; rateLimited: number; tokens: number; inputs: number };
  set(patch: Partial<FakeSwitches>): void;
  stop(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
};

function checkLimits(d: Decoded, model: UpstreamModel, sw: FakeSwitches, tokens: number[]): void {
  const maxInputs = sw.maxInputs ?? model.maxInputs;
  if (d.texts.length === 0) throw new FakeHttpError(400, "input must not be empty");
  if (d.texts.length > maxInputs) throw new FakeHttpError(400, `at most ${maxInputs} inputs per request, got ${d.texts.length}`);
  if (d.texts.some((t) => t === "")) throw new FakeHttpError(400, "input cannot be an empty string");
  const over = tokens.findIndex((t) => t > model.maxInputTokens);
  if (over >= 0) throw new FakeHttpError(400, `input ${over} has ${tokens[over]} tokens; this model's maximum context length is ${model.maxInputTokens}`);
  const total = tokens.reduce((a, b) => a + b, 0);
  const maxTotal = sw.maxRequestTokens ?? model.maxRequestTokens;
  if (total > maxTotal) throw new FakeHttpError(400, `request has ${total} tokens, at most ${maxTotal} allowed`);
  if (d.dims !== null && d.dims !== model.defaultDims) {
    const ok = model.reducible === "any" ? d.dims >= 1 && d.dims <= model.defaultDims : model.reducible?.includes(d.dims);
    if (!ok) throw new FakeHttpError(400, `output dimension ${d.dims} is not supported by this model`);
  }
}

export async function startFakeEmbeddings(provider: FakeProvider, opts: { apiKey?: string; switches?: Partial<FakeSwitches> } = {}): Promise<FakeEmbeddings> {
  // A key of its own by default: the process keeps one rate governor per provider, URL and key
  // (governor.ts governorFor), so a later fake given a port an earlier one had would inherit that
  // test's governor, limits and burst included (a CI run: 7 requests over a test's limit).
  const apiKey = opts.apiKey ?? `fake-${provider}-key-${randomBytes(8).toString("hex")}`;
  const switches = { ...defaults(), ...opts.switches };
  const requests: RecordedRequest[] = [];
  const counters = { received: 0, served: 0, rateLimited: 0, tokens: 0, inputs: 0 };
  let limiter = switches.rateLimit ? new FakeLimiter(switches.rateLimit) : null;
  let hanging: (() => void)[] = [];

  const answer = (status: number, body: unknown, headers: Record<string, string> = {}) =>
    Response.json(body, { status, headers });

  async function handle(req: Request): Promise<{ res: Response; decoded: Decoded | null; body: Record<string, unknown> }> {
    const path = new URL(req.url).pathname;
    const body = (await req.json().catch(() => ({}))) as Record<string, unknown>;
    let decoded: Decoded | null = null;
    const fail = (status: number, msg: string, headers?: Record<string, string>) => ({ res: answer(status, errorBody(provider, status, msg), headers), decoded, body });
    try {
      decoded = decode(provider, req, path, body);
    } catch (err) {
      if (err instanceof FakeHttpError) return fail(err.status, err.message);
      throw err;
    }
    // Echoes the whole key, worse than any real provider, so leaks in our messages show up.
    if (decoded.key !== apiKey) return fail(401, `Incorrect API key provided: ${decoded.key ?? "(none)"}`);
    const model = UPSTREAM[provider][decoded.model];
    if (!model) return fail(404, `The model ${decoded.model} does not exist`);
    if (decoded.base64 && switches.base64 === "refuse") return fail(400, "1 validation error: unexpected value in request body");
    const texts = decoded.truncate ? decoded.texts.map((t) => fakeTruncate(t, model.maxInputTokens)) : decoded.texts;
    const tokens = texts.map(fakeTokens);
    try {
      checkLimits(decoded, model, switches, tokens);
    } catch (err) {
      if (err instanceof FakeHttpError) return fail(err.status, err.message);
      throw err;
    }
    const total = tokens.reduce((a, b) => a + b, 0);
    if (switches.fail429 > 0) {
      switches.fail429--;
      const headers: Record<string, string> = {};
      if (switches.retryAfterSec !== null) headers["retry-after"] = String(switches.retryAfterSec);
      if (switches.retryAfterMs !== null) headers["retry-after-ms"] = String(switches.retryAfterMs);
      return fail(429, "Rate limit reached", headers);
    }
    const wait = limiter?.take(total) ?? null;
    if (wait !== null) return fail(429, `Rate limit reached for ${decoded.model}`, { "retry-after": String(wait) });
    if (switches.fail5xx > 0) {
      switches.fail5xx--;
      return fail(503, "The server is overloaded", switches.retry5xxMs === null ? undefined : { "retry-after-ms": String(switches.retry5xxMs) });
    }
    if (switches.hang > 0) {
      switches.hang--;
      await new Promise<void>((r) => hanging.push(r));
      return fail(503, "hung");
    }
    const delay = switches.latencyMs + Math.random() * switches.latencyJitterMs;
    if (delay > 0) await sleep(delay);
    if (switches.malformed > 0) return (switches.malformed--, { res: answer(200, { unexpected: true }), decoded, body });
    if (switches.notJson > 0) return (switches.notJson--, { res: new Response("<html>upstream proxy error</html>", { status: 200 }), decoded, body });
    const dims = decoded.dims ?? model.defaultDims;
    let vectors = texts.map((t) => fakeVector(decoded.model, decoded.kind, t, dims));
    if (switches.wrongDimensions > 0) (switches.wrongDimensions--, (vectors = vectors.map((v) => v.slice(1))));
    if (switches.wrongCount > 0) (switches.wrongCount--, (vectors = vectors.slice(1)));
    if (switches.nonNumeric > 0) (switches.nonNumeric--, (vectors = vectors.map((v, i) => (i === 0 ? [null as unknown as number, ...v.slice(1)] : v))));
    counters.tokens += total;
    counters.inputs += texts.length;
    const headers: Record<string, string> = {};
    if (switches.stateLimits && switches.rateLimit) {
      headers["x-ratelimit-limit-requests"] = String(switches.rateLimit.requestsPerMinute);
      headers["x-ratelimit-limit-tokens"] = String(switches.rateLimit.tokensPerMinute);
    }
    return { res: answer(200, encode(provider, decoded.model, vectors, tokens, { shuffle: switches.shuffle, base64: decoded.base64 && switches.base64 === "honour" }), headers), decoded, body };
  }

  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    idleTimeout: 0,
    async fetch(req) {
      const atMs = performance.now();
      counters.received++;
      const { res, decoded, body } = await handle(req);
      if (res.status === 429) counters.rateLimited++;
      else if (res.status === 200) counters.served++;
      if (switches.record) requests.push({ path: new URL(req.url).pathname, key: decoded?.key ?? null, body, decoded, status: res.status, atMs });
      return res;
    },
  });

  const stop = async () => {
    for (const r of hanging) r();
    hanging = [];
    await server.stop(true);
  };
  return {
    provider,
    url: `http://127.0.0.1:${server.port}/v1`,
    apiKey,
    switches,
    requests,
    counters,
    set(patch) {
      Object.assign(switches, patch);
      if ("rateLimit" in patch) limiter = switches.rateLimit ? new FakeLimiter(switches.rateLimit) : null;
    },
    stop,
    [Symbol.asyncDispose]: stop,
  };
}
