// Call counters kept by every driver instance and summed per provider for the process, so
// metrics and cost estimates see every upstream call, retries included.
import type { ProviderName } from "./catalog.ts";

export type EmbeddingStats = {
  /** HTTP requests sent upstream, retries included. */
  requests: number;
  /** Texts embedded successfully. */
  inputs: number;
  /** Tokens billed: the provider's own count when it answers one, else our estimate. */
  tokens: number;
  retries: number;
  /** 429 answers received. */
  rateLimited: number;
  /** `embed` calls that ended in an error. */
  failures: number;
  /** Texts cut to the model's max_tokens before embedding (counted by the local provider). */
  truncated: number;
};

export const emptyStats = (): EmbeddingStats => ({ requests: 0, inputs: 0, tokens: 0, retries: 0, rateLimited: 0, failures: 0, truncated: 0 });

const processTotals = new Map<ProviderName, EmbeddingStats>();

/** A snapshot of the process-wide totals per provider. */
export function embeddingTotals(): Record<string, EmbeddingStats> {
  return Object.fromEntries([...processTotals].map(([k, v]) => [k, { ...v }]));
}

/** Adds `delta` to an instance's counters and to the process totals of its provider. */
export function count(provider: ProviderName, own: EmbeddingStats, delta: Partial<EmbeddingStats>): void {
  let total = processTotals.get(provider);
  if (!total) processTotals.set(provider, (total = emptyStats()));
  for (const key of Object.keys(delta) as (keyof EmbeddingStats)[]) {
    const n = delta[key] ?? 0;
    own[key] += n;
    total[key] += n;
  }
}
