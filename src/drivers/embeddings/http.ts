// One upstream HTTP call and the retry loop around it, shared by the three hosted drivers.
// Retried: 429, 5xx, 408, timeouts and network errors — exponential backoff with full jitter
// (AWS architecture blog's "full jitter": the spread keeps many workers from retrying in step),
// or the provider's Retry-After when it gives one (up to MAX_RETRY_AFTER_MS). Not retried: every
// other 4xx — a bad key or a bad request will not get better, and each attempt may cost the user
// money — nor a redirect, nor a base URL the host guard refuses (pinned.ts).
// A bad answer — a 200 that is not JSON, or whose shape, count or sizes are not what we asked
// for — is the provider's fault and transient until proven otherwise (issue 14): it is retried
// too, but at most BAD_ANSWER_ATTEMPTS times in a row, since the provider has likely billed each
// one; past that the error is still retryable, and the task's back-off (seconds to minutes apart)
// decides whether to try again.
// What an answer may put into our messages (a 502, a task's last_error, the sync history) is
// bounded: a base URL can point at any service on the operator's network, and its error pages must
// not become a way to read it. Only a JSON error's own message, cut to PROVIDER_MESSAGE_CHARS, and
// the status get through.
import { AppError, DriverError } from "../../shared/errors.ts";
import type { RateGovernor } from "./governor.ts";
import { dialFor, type Dial, type UpstreamGuard } from "./pinned.ts";
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

/**
 * The longest Retry-After we obey, per wait. The real providers ask for seconds (their limits are
 * per minute), but whatever a base URL points at can name any number, and a 429's wait pauses
 * every caller of the key (governor.ts): `Retry-After: 100000` would park a backfill, and the
 * queries sharing its key, for 28 hours. A longer ask is a plain retryable failure: our own
 * backoff, then the task's.
 */
export const MAX_RETRY_AFTER_MS = 60_000;

/** The wait a provider asked for, if we obey it (at most MAX_RETRY_AFTER_MS); null: use our backoff. */
export function obeyedRetryAfterMs(headers: Headers, nowMs = Date.now()): number | null {
  const asked = retryAfterMs(headers, nowMs);
  return asked !== null && asked <= MAX_RETRY_AFTER_MS ? asked : null;
}

/** Characters of a provider's own error message kept in ours: a sentence, not a page. */
export const PROVIDER_MESSAGE_CHARS = 200;

/** `text` on one line, cut to `max` characters (whole code points), with an ellipsis when cut. */
export function clip(text: string, max = PROVIDER_MESSAGE_CHARS): string {
  const oneLine = text.slice(0, 4 * max).replace(/[\s\u0000-\u001f\u007f]+/g, " ").trim();
  const chars = Array.from(oneLine);
  return chars.length > max ? `${chars.slice(0, max).join("")}…` : oneLine;
}

/**
 * What an error body may say in our messages: OpenAI/Vertex `{error:{message}}` (or `{error: "…"}`),
 * Voyage `{detail}`, or `{message}`, without the key and clipped; of anything else only its size.
 * The key is removed before the cut, so a cut cannot leave part of it behind.
 */
export function providerMessage(body: string, secret = ""): string {
  if (body.trim() === "") return "(empty answer)";
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return `(non-JSON answer, ${Buffer.byteLength(body)} bytes)`;
  }
  const p = (typeof parsed === "object" && parsed !== null ? parsed : {}) as { error?: { message?: unknown } | string; detail?: unknown; message?: unknown };
  const candidates = [typeof p.error === "object" ? p.error?.message : p.error, p.detail, p.message];
  for (const c of candidates) if (typeof c === "string" && c.trim()) return clip(redact(c, secret));
  return `(JSON answer without an error message, ${Buffer.byteLength(body)} bytes)`;
}

/** Removes the API key from any text that might reach a log or a user. */
export function redact(text: string, secret: string): string {
  return secret.length >= 4 ? text.split(secret).join("[redacted]") : text;
}

/** The vetted dial for an attempt; a refused host fails for good, a name that will not resolve as a network error. */
async function dialOrFail(url: string, guard: UpstreamGuard | undefined): Promise<Dial> {
  try {
    return await dialFor(url, guard);
  } catch (err) {
    if (err instanceof AppError) throw new AttemptError(`base_url refused: ${err.message}`, false, null, null);
    if (err instanceof DriverError) throw new AttemptError(`network error: ${err.message}`, true, null, null);
    throw err;
  }
}

/** `p`, or a rejection with the signal's reason when it aborts first (a DNS lookup takes no signal). */
function beforeAbort<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

async function attempt(req: UpstreamRequest, ctx: SendContext): Promise<UpstreamAnswer> {
  const timeout = AbortSignal.timeout(ctx.timeoutMs);
  const combined = ctx.signal ? AbortSignal.any([ctx.signal, timeout]) : timeout;
  let res: Response;
  let text: string;
  try {
    const dial = await beforeAbort(dialOrFail(req.url, ctx.guard), combined);
    res = await fetch(dial.url, {
      method: "POST",
      headers: { "content-type": "application/json", ...req.headers, ...dial.headers },
      body: JSON.stringify(req.body),
      // A redirect would carry the key and the texts to an address nobody vetted.
      redirect: "manual",
      ...(dial.tls ? { tls: dial.tls } : {}),
      signal: combined,
    });
    if (res.status >= 300 && res.status < 400) {
      await res.body?.cancel();
      throw new AttemptError(`${res.status}: answered with a redirect, which is not followed (set base_url to the address it names)`, false, res.status, null);
    }
    text = await res.text();
  } catch (err) {
    if (err instanceof AttemptError) throw err;
    if (ctx.signal?.aborted) throw ctx.signal.reason;
    const timedOut = timeout.aborted;
    throw new AttemptError(timedOut ? `no answer within ${ctx.timeoutMs} ms` : `network error: ${clip((err as Error).message)}`, true, null, null);
  }
  if (res.ok) {
    try {
      return { json: JSON.parse(text), headers: res.headers };
    } catch {
      throw new AttemptError(`answered ${res.status} with a body that is not JSON`, true, res.status, null, true);
    }
  }
  const retryable = res.status === 429 || res.status === 408 || res.status >= 500;
  throw new AttemptError(`${res.status}: ${providerMessage(text, ctx.apiKey)}`, retryable, res.status, obeyedRetryAfterMs(res.headers));
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
  /** Set for a user-given base URL: every attempt resolves, checks and dials the vetted address (pinned.ts). */
  guard?: UpstreamGuard;
  /** After each attempt: `ok` when it answered usable vectors, `status` its HTTP status (null: none). */
  onAttempt: (outcome: { ok: boolean; status: number | null; retry: boolean; message?: string }) => void;
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
      const value = readAnswer(await attempt(req, ctx), read);
      ctx.onAttempt({ ok: true, status: 200, retry: false });
      return value;
    } catch (err) {
      if (!(err instanceof AttemptError)) throw err; // aborted by the caller
      if (err.badAnswer) badAnswers++;
      else badAnswers = 0;
      const last = n + 1 >= ctx.retry.maxAttempts || badAnswers >= BAD_ANSWER_ATTEMPTS;
      const message = redact(`${ctx.label}: ${err.message}`, ctx.apiKey);
      ctx.onAttempt({ ok: false, status: err.status, retry: err.retryable && !last, message });
      // A refused request did not count upstream (or we cannot know); give the tokens back. A
      // bad answer was probably billed: keep them spent.
      if (!err.badAnswer) ctx.governor.settle(ctx.tokens, 0);
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
    // Clipped too: a value quoted from the answer is the answer's text.
    throw new AttemptError(clip((err as Error).message), true, 200, null, true);
  }
}
