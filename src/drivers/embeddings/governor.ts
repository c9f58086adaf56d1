// One rate governor per provider key, shared by every caller in the process, so that ten tasks
// embedding with the same key spend one budget instead of ten. Two token buckets — requests and
// tokens per minute — refill continuously; a request waits until both hold what it needs.
//
// Units and choices:
// - Capacity is `burstSec` seconds of the rate (default 6 s = a tenth of a minute): providers
//   enforce per-minute limits over shorter windows, so a full minute's burst would earn 429s.
// - The budget used is `utilization` (default 0.97) of the stated limits, a margin for clocks and
//   for requests arriving upstream in a different order than they left.
// - Tokens are reserved from our conservative estimate and the difference is given back once the
//   provider reports its own count, so the over-estimate does not cost throughput.
// - A 429 pauses the whole governor for the provider's Retry-After and empties the buckets, so
//   every caller backs off together instead of each retrying into the wall.
// - Queries wait ahead of documents: a search should not queue behind a backfill. But not forever:
//   while both wait, every QUERIES_PER_DOCUMENT-th slot goes to a document, and so does any slot
//   once a document has waited DOCUMENT_WAIT_MS. With queries first and nothing else, two clients
//   querying without pause on a key at its limit held a change stream's embeddings for 9-47 s a
//   batch: its rows never became searchable while anyone searched (shared/foreground.ts says why
//   sync is foreground work).
import { createHash } from "node:crypto";
import type { RateLimits } from "./types.ts";

type Waiter = { tokens: number; since: number; resolve: () => void; reject: (e: unknown) => void; signal?: AbortSignal; onAbort?: () => void };

/** While both wait, a document gets at least one slot in this many (a quarter of the key's rate). */
const QUERIES_PER_DOCUMENT = 3;
/** A document that has waited this long goes next, queries waiting or not. */
const DOCUMENT_WAIT_MS = 1_000;

export type GovernorOptions = { burstSec?: number; utilization?: number };

export class RateGovernor {
  private requestLevel: number;
  private tokenLevel: number;
  private last = performance.now();
  private pausedUntil = 0;
  private readonly queues: { query: Waiter[]; document: Waiter[] } = { query: [], document: [] };
  private timer: ReturnType<typeof setTimeout> | null = null;
  private limits!: { requestsPerMs: number; tokensPerMs: number; requestCap: number; tokenCap: number };
  private readonly burstSec: number;
  private stated: RateLimits | null = null;
  private readonly utilization: number;

  constructor(limits: RateLimits, opts: GovernorOptions = {}) {
    this.burstSec = opts.burstSec ?? 6;
    this.utilization = opts.utilization ?? 0.97;
    this.setLimits(limits);
    this.requestLevel = this.limits.requestCap;
    this.tokenLevel = this.limits.tokenCap;
  }

  /** Adopts new limits (e.g. learnt from the provider's headers), keeping the current levels. */
  setLimits(limits: RateLimits): void {
    const known = this.stated;
    if (known && known.requestsPerMinute === limits.requestsPerMinute && known.tokensPerMinute === limits.tokensPerMinute) return;
    if (known) this.refill(); // time so far counts at the old rate
    this.stated = { ...limits };
    const perMs = (perMinute: number) => (perMinute * this.utilization) / 60_000;
    const cap = (perMinute: number) => Math.max(1, (perMinute * this.utilization * this.burstSec) / 60);
    this.limits = {
      requestsPerMs: perMs(limits.requestsPerMinute),
      tokensPerMs: perMs(limits.tokensPerMinute),
      requestCap: cap(limits.requestsPerMinute),
      tokenCap: cap(limits.tokensPerMinute),
    };
    if (known) {
      this.requestLevel = Math.min(this.requestLevel, this.limits.requestCap);
      this.tokenLevel = Math.min(this.tokenLevel, this.limits.tokenCap);
      this.drain();
    }
  }

  get currentLimits(): RateLimits {
    return { ...this.stated! };
  }

  /** The largest request (in tokens) that can pass without waiting for more than a full bucket. */
  get tokenCapacity(): number {
    return this.limits.tokenCap;
  }

  /** Nobody waiting and nothing scheduled: forgetting it loses at most a bucket's refill. */
  get idle(): boolean {
    return this.queues.query.length === 0 && this.queues.document.length === 0 && this.timer === null;
  }

  /** Waits until one request of `tokens` may be sent. */
  acquire(tokens: number, priority: "query" | "document", signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const waiter: Waiter = { tokens, since: performance.now(), resolve, reject, signal };
      if (signal) {
        waiter.onAbort = () => {
          const q = this.queues[priority];
          const i = q.indexOf(waiter);
          if (i >= 0) q.splice(i, 1);
          reject(signal.reason);
        };
        signal.addEventListener("abort", waiter.onAbort, { once: true });
      }
      this.queues[priority].push(waiter);
      this.drain();
    });
  }

  /** Gives back the part of a reservation the provider did not count. */
  settle(reservedTokens: number, actualTokens: number): void {
    const refund = reservedTokens - actualTokens;
    if (refund > 0) this.tokenLevel = Math.min(this.limits.tokenCap, this.tokenLevel + refund);
    else this.tokenLevel += refund;
    this.drain();
  }

  /** Stops all callers for `ms` (a 429's Retry-After) and empties the buckets. */
  pause(ms: number): void {
    this.refill();
    this.pausedUntil = Math.max(this.pausedUntil, performance.now() + ms);
    this.requestLevel = Math.min(this.requestLevel, 0);
    this.tokenLevel = Math.min(this.tokenLevel, 0);
    this.drain();
  }

  private refill(): void {
    const now = performance.now();
    const from = Math.max(this.last, this.pausedUntil);
    if (now > from) {
      const dt = now - from;
      this.requestLevel = Math.min(this.limits.requestCap, this.requestLevel + dt * this.limits.requestsPerMs);
      this.tokenLevel = Math.min(this.limits.tokenCap, this.tokenLevel + dt * this.limits.tokensPerMs);
    }
    this.last = Math.max(now, this.last);
  }

  /** Slots given to queries since a document last had one. */
  private queriesInARow = 0;

  private head(): { waiter: Waiter; queue: Waiter[] } | null {
    const query = this.queues.query[0];
    const document = this.queues.document[0];
    if (document && (!query || this.queriesInARow >= QUERIES_PER_DOCUMENT || performance.now() - document.since >= DOCUMENT_WAIT_MS)) return { waiter: document, queue: this.queues.document };
    if (query) return { waiter: query, queue: this.queues.query };
    return null;
  }

  /** Serves waiters in order while the buckets allow, then sleeps until the next one can go. */
  private drain(): void {
    if (this.timer) return;
    this.refill();
    for (let next = this.head(); next; next = this.head()) {
      const now = performance.now();
      // A request larger than the bucket goes once the bucket is full and leaves it in debt.
      const need = Math.min(next.waiter.tokens, this.limits.tokenCap);
      const waitMs = Math.max(
        this.pausedUntil - now,
        (1 - this.requestLevel) / this.limits.requestsPerMs,
        (need - this.tokenLevel) / this.limits.tokensPerMs,
      );
      if (waitMs > 0) {
        this.timer = setTimeout(() => {
          this.timer = null;
          this.drain();
        }, Math.ceil(waitMs));
        return;
      }
      next.queue.shift();
      this.queriesInARow = next.queue === this.queues.query ? this.queriesInARow + 1 : 0;
      this.requestLevel -= 1;
      this.tokenLevel -= next.waiter.tokens;
      if (next.waiter.onAbort) next.waiter.signal?.removeEventListener("abort", next.waiter.onAbort);
      next.waiter.resolve();
    }
  }
}

// Each provider key a tenant adds makes a governor; the map keeps the most recently used, so that
// keys made and dropped (or a stream of bad ones) cannot grow it without bound. An idle governor
// past the bound is forgotten; one with callers waiting is kept until it is idle.
const MAX_GOVERNORS = 1_000;
const governors = new Map<string, RateGovernor>();

function forgetIdle(): void {
  for (const [id, governor] of governors) {
    if (governors.size <= MAX_GOVERNORS) return;
    if (governor.idle) governors.delete(id);
  }
}

/** How many governors the process keeps (tests). */
export const governorCount = () => governors.size;

/**
 * The process's governor for one provider key. The key is identified by its SHA-256 (with the
 * provider and base URL), so the raw secret is never kept as a map key. `limits` apply when the
 * governor is first created; later callers share it as is.
 */
export function governorFor(provider: string, baseUrl: string, apiKey: string, limits: RateLimits, opts?: GovernorOptions): RateGovernor {
  const id = createHash("sha256").update(`${provider}\n${baseUrl}\n${apiKey}`).digest("hex");
  let governor = governors.get(id);
  if (governor) governors.delete(id); // re-inserted below: the map's order is the order of use
  else governor = new RateGovernor(limits, opts);
  governors.set(id, governor);
  if (governors.size > MAX_GOVERNORS) forgetIdle();
  return governor;
}
