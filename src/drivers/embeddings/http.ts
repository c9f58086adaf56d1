// One upstream HTTP call and the retry loop around it, shared by the three hosted drivers.
// Retried: 429, 5xx, 408, timeouts and network errors — exponential backoff with full jitter
// (AWS architecture blog's "full jitter": the spread keeps many workers from retrying in step),
// or the provider's Retry-After when it gives one. Not retried: every other 4xx — a bad key or a
// bad request will not get better, and each attempt may cost the user money.
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
  ) {
    super(message);
  }
}

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
      throw new AttemptError(`answered ${res.status} with a body that is not JSON`, false, res.status, null);
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
  onAttempt: (outcome: { status: number | null; retry: boolean }) => void;
};

/**
 * Sends one request through the governor, retrying transient failures. Each attempt takes its
 * own slot from the governor (a retry costs the provider a request too). Returns the parsed JSON
 * answer; throws DriverError whose message carries the provider's words, never the key.
 */
export async function send(req: UpstreamRequest, ctx: SendContext): Promise<UpstreamAnswer> {
  for (let n = 0; ; n++) {
    await ctx.governor.acquire(ctx.tokens, ctx.priority, ctx.signal);
    try {
      const answer = await attempt(req, ctx.timeoutMs, ctx.signal);
      ctx.onAttempt({ status: 200, retry: false });
      return answer;
    } catch (err) {
      if (!(err instanceof AttemptError)) throw err; // aborted by the caller
      const last = n + 1 >= ctx.retry.maxAttempts;
      ctx.onAttempt({ status: err.status, retry: err.retryable && !last });
      // The request did not count upstream (or we cannot know); give the tokens back.
      ctx.governor.settle(ctx.tokens, 0);
      const message = redact(`${ctx.label}: ${err.message}`, ctx.apiKey);
      if (!err.retryable) throw new DriverError(message, { retryable: false, context: { status: err.status } });
      if (last) throw new DriverError(`${message} (gave up after ${n + 1} attempts)`, { retryable: true, context: { status: err.status } });
      if (err.status === 429) ctx.governor.pause(err.retryAfterMs ?? backoffMs(n, ctx.retry));
      await sleep(err.status === 429 ? 0 : (err.retryAfterMs ?? backoffMs(n, ctx.retry)), ctx.signal);
    }
  }
}
