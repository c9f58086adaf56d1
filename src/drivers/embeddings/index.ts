// Builds the driver for a provider. Base URL: the provider's `base_url` option, else the
// VECSYNC_EMB_*_URL setting (docs/running.md#configuration), else the provider's public endpoint.
import type { ProviderName } from "./catalog.ts";
import { EMB_A_DEFAULT_BASE, embAWire } from "./emb-a.ts";
import { EMB_B_DEFAULT_BASE, embBWire } from "./emb-b.ts";
import { EMB_C_DEFAULT_BASE, embCWire } from "./emb-c.ts";
import { HostedProvider, type WireFormat } from "./hosted.ts";
import { LocalProvider } from "./local.ts";
import type { UpstreamGuard } from "./pinned.ts";
import type { EmbeddingObserver, EmbeddingProvider, HostedTuning, RateLimits } from "./types.ts";

export type { EmbeddingObserver, EmbeddingProvider, EmbedOptions, EmbedKind, HostedTuning, RateLimits } from "./types.ts";
export { MODELS, findModel, modelsOf, validateModelChoice, type ModelRow, type ModelSpec, type ProviderName } from "./catalog.ts";
export { embeddingTotals, type EmbeddingStats } from "./stats.ts";
export type { UpstreamGuard } from "./pinned.ts";

const WIRES: Record<Exclude<ProviderName, "local">, { wire: WireFormat; base: string; limits: RateLimits }> = {
  // Starting budgets per key, before any 429 teaches otherwise. emb_a: OpenAI's usage tier 1 for
  // text-embedding-3-*. emb_b: Vertex's default online-prediction quota is per project and region
  // and not published as one figure; a cautious guess. emb_c: Voyage's basic tier for voyage-3.5.
  emb_a: { wire: embAWire, base: EMB_A_DEFAULT_BASE, limits: { requestsPerMinute: 3000, tokensPerMinute: 1_000_000 } },
  emb_b: { wire: embBWire, base: EMB_B_DEFAULT_BASE, limits: { requestsPerMinute: 600, tokensPerMinute: 500_000 } },
  emb_c: { wire: embCWire, base: EMB_C_DEFAULT_BASE, limits: { requestsPerMinute: 2000, tokensPerMinute: 3_000_000 } },
};

export const DEFAULT_TUNING: Omit<HostedTuning, "rateLimits"> = {
  concurrency: 4,
  timeoutMs: 60_000,
  // 0.5 s doubling to 30 s over 6 attempts: about a minute of patience in the worst case.
  retry: { maxAttempts: 6, baseDelayMs: 500, maxDelayMs: 30_000 },
};

/** The operator's endpoint per hosted provider (VECSYNC_EMB_*_URL); null = the provider's own. */
export type EmbeddingUrls = { embUrls: Record<Exclude<ProviderName, "local">, string | null> };

export type ProviderSettings = {
  provider: ProviderName;
  /** Not needed for `local`. */
  apiKey?: string;
  baseUrl?: string | null;
  config?: EmbeddingUrls;
  tuning?: Partial<HostedTuning>;
  /** The service's metrics; absent for drivers built outside a service (benchmarks, driver tests). */
  observer?: EmbeddingObserver;
  /**
   * The host guard for a user's `baseUrl` (docs/api.md#host-guard): every request resolves, checks
   * and dials the vetted address. The operator's VECSYNC_EMB_*_URL and the public endpoints are trusted.
   */
  guard?: UpstreamGuard;
  /** Between slices of token counting: the service's foreground turn (shared/foreground.ts). */
  turn?: () => Promise<void>;
};

export function createEmbeddingProvider(settings: ProviderSettings): EmbeddingProvider {
  if (settings.provider === "local") return new LocalProvider(settings.observer);
  const known = WIRES[settings.provider];
  const baseUrl = settings.baseUrl ?? settings.config?.embUrls[settings.provider] ?? known.base;
  const tuning: HostedTuning = { ...DEFAULT_TUNING, rateLimits: known.limits, ...settings.tuning };
  const guard = settings.baseUrl ? settings.guard : undefined;
  return new HostedProvider(known.wire, { apiKey: settings.apiKey ?? "", baseUrl, tuning, observer: settings.observer, guard, turn: settings.turn });
}
