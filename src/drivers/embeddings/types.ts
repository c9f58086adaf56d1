// The one interface every embedding driver implements, and the knobs the shared machinery takes.
import type { ProviderName } from "./catalog.ts";
import type { EmbeddingStats } from "./stats.ts";

export type EmbedKind = "document" | "query";

export type EmbedOptions = {
  /** The model name as in docs/api.md#models (not the upstream id). */
  model: string;
  /** The vector size wanted; reductions are asked of the provider, never cut here. */
  dimensions: number;
  /** Rows are embedded as documents, search text as queries, where the provider tells them apart. */
  kind: EmbedKind;
  signal?: AbortSignal;
  /**
   * Told of each failed attempt that will be tried again, in the words its error would carry
   * (the key removed): a sync pass says what the provider answered while it keeps trying.
   */
  onRetry?: (message: string) => void;
};

/**
 * Told of every upstream request and of the tokens each successful one billed (the service's
 * metrics, src/shared/metrics.ts). `model` is the catalog's name, never a text or a key.
 */
export interface EmbeddingObserver {
  /** One request, each retry its own; `status` its HTTP status, null when none came back. */
  request(e: { provider: ProviderName; model: string; ok: boolean; status: number | null }): void;
  tokens(e: { provider: ProviderName; model: string; tokens: number }): void;
}

export interface EmbeddingProvider {
  readonly provider: ProviderName;
  /** One vector per text, in the order of `texts`. Throws DriverError on failure. */
  embed(texts: string[], opts: EmbedOptions): Promise<Float32Array[]>;
  /** Counters for metrics and cost estimates (this instance's calls). */
  readonly stats: EmbeddingStats;
}

/** Requests and tokens per minute a provider key may use (the governor's budget). */
export type RateLimits = { requestsPerMinute: number; tokensPerMinute: number };

export type RetryPolicy = {
  /** Attempts per request, the first included. */
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
};

export type HostedTuning = {
  /** Requests of one `embed` call in flight at once. */
  concurrency: number;
  timeoutMs: number;
  retry: RetryPolicy;
  rateLimits: RateLimits;
  /** Seconds of the rate the governor may spend at once (default 6). */
  burstSec?: number;
  /** Overrides of the model's per-request ceilings (tests; gateways with tighter limits). */
  maxInputsPerRequest?: number;
  maxTokensPerRequest?: number;
};
