import type { Services } from "../../services.ts";
import { createEmbeddingProvider, type EmbeddingProvider, type EmbedOptions, type HostedTuning } from "../../drivers/embeddings/index.ts";
import { AppError, DriverError } from "../../shared/errors.ts";
import { hostPolicy, systemResolver, type Resolver } from "../../shared/host-guard.ts";
import { API_KEY_PURPOSE, providerRowOf } from "./service.ts";

// What other domains (vector tables, query) call to embed with an organization's provider.
// The key is opened here, handed to the driver and kept nowhere else; the drivers strip it from
// every message they raise (drivers/embeddings/http.ts `redact`).

export type ProviderForEmbeddingOptions = {
  tuning?: Partial<HostedTuning>;
  /** For tests of the host guard: answers host names instead of the system resolver. */
  resolver?: Resolver;
};

/**
 * A driver for the organization's provider, with its decrypted key and base URL (the provider's
 * `base_url`, else VECSYNC_EMB_*_URL, else the public endpoint). 404 for an unknown or foreign id.
 * A stored `base_url` is vetted by the host guard at every request (docs/api.md#host-guard), rows
 * stored before a rule existed included; the operator's setting and the public endpoints are not.
 */
export async function providerForEmbedding(services: Services, orgId: string, providerId: string, opts: ProviderForEmbeddingOptions = {}): Promise<EmbeddingProvider> {
  const row = await providerRowOf(services, orgId, providerId);
  let apiKey: string | undefined;
  if (row.apiKeySealed !== null) {
    try {
      apiKey = services.secrets.open(row.apiKeySealed, API_KEY_PURPOSE);
    } catch {
      // Only a changed master key (or a damaged row) gets here; the user can repair it with PUT.
      throw new AppError("provider_error", `The stored API key of embedding provider ${row.id} cannot be decrypted (was the master key changed?); set it again with PUT /v1/embedding-providers/${row.id}`);
    }
  }
  const guard = { policy: hostPolicy(services.config), resolve: opts.resolver ?? systemResolver };
  return createEmbeddingProvider({ provider: row.provider, apiKey, baseUrl: row.baseUrl, config: services.config, tuning: opts.tuning, observer: services.metrics.embeddings, guard, turn: () => services.foreground.turn() });
}

/**
 * Embeds during a synchronous request (query text, a preview): a driver failure becomes 502
 * `provider_error` carrying the provider's own words (docs/api.md#errors). Tasks call `embed` directly
 * and let the scheduler read `DriverError.retryable`.
 */
export async function embedOrFail(provider: EmbeddingProvider, texts: string[], opts: EmbedOptions): Promise<Float32Array[]> {
  try {
    return await provider.embed(texts, opts);
  } catch (err) {
    if (err instanceof DriverError) {
      throw new AppError("provider_error", `The embedding provider failed: ${err.message}`, { details: { provider: provider.provider, retryable: err.retryable } });
    }
    throw err;
  }
}
