// One upstream HTTP call and the retry loop around it, shared by the three hosted drivers.
// Retried: 429, 5xx, 408, timeouts and network errors — exponential backoff with full jitter
// (AWS architecture blog's "full jitter": the spread keeps many workers from retrying in step),
// or the provider's Retry-After when it gives one. Not retried: every other 4xx — a bad key or a
// bad request will not get better, and each attempt may cost the user money.
// A bad answer — a 200 that is not JSON, or whose shape, count or sizes are not what we asked
// for — is the provider's fault and transient until proven otherwise (issue 14): it is retried
// too, but at most BAD_ANSWER_ATTEMPTS times in a row, since the provider has likely billed each
// one; past that the error is still retryable, and the task's back-off (seconds to minutes apart)
// decides whether to try again.
import { DriverError } from "../../shared/errors.ts";
import type { RateGovernor } from "./governor.ts";
import type { RetryPolicy } from "./types.ts";

export type UpstreamRequest = { url: string; headers: Record<string, string>; body: unknown };

export type UpstreamAnswer = { json: unknown; headers: Headers };

/** A failed attempt: whether to try again and after how long the provider asked us to wait. */
class AttemptError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly status: number | null,
    readonly retryAfterMs: number | null,
    /** A 200 whose body we could not use: probably billed, so retried on a shorter leash. */
    readonly badAnswer = false,
  ) {
    super(message);
  }
}

/** Bad answers in a row one request takes (the first included) before it gives up. */
export const BAD_ANSWER_ATTEMPTS = 3;

/** Retry-After as seconds or an HTTP date; OpenAI's `retry-after-ms` wins when present. */
export function retryAfterMs(headers: Headers, nowMs = Date.now()): number | null {
  const ms = headers.get("retry-after-ms");
  if (ms && Number.isFinite(Number(ms))) return Math.max(0, Number(ms));
  const raw = headers.get("retry-after");
  if (!raw) return null;
  const seconds = Number(raw);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const at = Date.parse(raw);
  return Number.isNaN(at) ? null : Math.max(0, at - nowMs);
}

/** The provider's own words from an error body: OpenAI/Vertex `{error:{message}}`, Voyage `{detail}`. */
export function providerMessage(body: string): string {
  try {
    const parsed = JSON.parse(body) as { error?: { message?: unknown } | string; detail?: unknown; message?: unknown };
    const candidates = [typeof parsed.error === "object" ? parsed.error?.message : parsed.error, parsed.detail, parsed.message];
    for (const c of candidates) if (typeof c === "string" && c) return c;
  } catch {
    // not JSON: fall through to the raw text
  }
  return body.slice(0, 300) || "(empty answer)";
}

/** Removes the API key from any text that might reach a log or a user. */
export function redact(text: string, secret: string): string {
  return secret.length >= 4 ? text.split(secret).join("[redacted]") : text;
}

async function attempt(req: UpstreamRequest, timeoutMs: number, signal: AbortSignal | undefined): Promise<UpstreamAnswer> {
  const timeout = AbortSignal.timeout(timeoutMs);
  const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
  let res: Response;
  let text: string;
  try {
    res = await fetch(req.url, {
      method: "POST",
      headers: { "content-type": "application/json", ...req.headers },
      body: JSON.stringify(req.body),
      signal: combined,
    });
    text = await res.text();
  } catch (err) {
    if (signal?.aborted) throw signal.reason;
    const timedOut = timeout.aborted;
    throw new AttemptError(timedOut ? `no answer within ${timeoutMs} ms` : `network error: ${(err as Error).message}`, true, null, null);
  }
  if (res.ok) {
    try {
      return { json: JSON.parse(text), headers: res.headers };
    } catch {
      throw new AttemptError(`answered ${res.status} with a body that is not JSON`, true, res.status, null, true);
    }
  }
  const retryable = res.status === 429 || res.status === 408 || res.status >= 500;
  throw new AttemptError(`${res.status}: ${providerMessage(text)}`, retryable, res.status, retryAfterMs(res.headers));
}

/** Full-jitter exponential backoff: a uniform wait in [0, min(max, base·2^n)]. */
export function backoffMs(retry: number, policy: RetryPolicy): number {
  return Math.random() * Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retry);
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => (clearTimeout(t), reject(signal.reason)), { once: true });
  });

export type SendContext = {
  label: string; // e.g. "emb_a text-embedding-3-small", for messages
  apiKey: string;
  governor: RateGovernor;
  tokens: number;
  priority: "query" | "document";
  timeoutMs: number;
  retry: RetryPolicy;
  signal?: AbortSignal;
  /** After each attempt: `ok` when it answered usable vectors, `status` its HTTP status (null: none). */
  onAttempt: (outcome: { ok: boolean; status: number | null; retry: boolean }) => void;
};

/**
 * Sends one request through the governor, retrying transient failures. Each attempt takes its
 * own slot from the governor (a retry costs the provider a request too). `read` turns the JSON
 * answer into what the caller wants and throws (any Error, its message saying what is wrong) when
 * the answer is unusable: that attempt counts as a bad answer. Throws DriverError whose message
 * carries the provider's words, never the key.
 */
export async function send<T>(req: UpstreamRequest, ctx: SendContext, read: (answer: UpstreamAnswer) => T): Promise<T> {
  let badAnswers = 0;
  for (let n = 0; ; n++) {
    await ctx.governor.acquire(ctx.tokens, ctx.priority, ctx.signal);
    try {
      const value = readAnswer(await attempt(req, ctx.timeoutMs, ctx.signal), read);
      ctx.onAttempt({ ok: true, status: 200, retry: false });
      return value;
    } catch (err) {
      if (!(err instanceof AttemptError)) throw err; // aborted by the caller
      if (err.badAnswer) badAnswers++;
      else badAnswers = 0;
      const last = n + 1 >= ctx.retry.maxAttempts || badAnswers >= BAD_ANSWER_ATTEMPTS;
      ctx.onAttempt({ ok: false, status: err.status, retry: err.retryable && !last });
      // A refused request did not count upstream (or we cannot know); give the tokens back. A
      // bad answer was probably billed: keep them spent.
      if (!err.badAnswer) ctx.governor.settle(ctx.tokens, 0);
      const message = redact(`${ctx.label}: ${err.message}`, ctx.apiKey);
      const context = { status: err.status, ...(err.badAnswer ? { bad_answer: true } : {}) };
      if (!err.retryable) throw new DriverError(message, { retryable: false, context });
      if (last) throw new DriverError(`${message} (gave up after ${n + 1} attempts)`, { retryable: true, context });
      if (err.status === 429) ctx.governor.pause(err.retryAfterMs ?? backoffMs(n, ctx.retry));
      await sleep(err.status === 429 ? 0 : (err.retryAfterMs ?? backoffMs(n, ctx.retry)), ctx.signal);
    }
  }
}

/** The caller's reading of a 200; a failure to read it is a bad answer, retried like a 5xx. */
function readAnswer<T>(answer: UpstreamAnswer, read: (answer: UpstreamAnswer) => T): T {
  try {
    return read(answer);
  } catch (err) {
    throw new AttemptError((err as Error).message, true, 200, null, true);
  }
}
