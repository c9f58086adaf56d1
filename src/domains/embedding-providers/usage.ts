import type { Services } from "../../services.ts";

// A provider may not be deleted while a vector table embeds with it (409 in_use). Vector tables
// come later and this domain may not read their tables, so that domain registers a check here,
// just as resources register with environments/usage.ts.

export type ProviderUsageCheck = {
  /** Plural resource name for the error message, e.g. "vector tables". */
  resource: string;
  count(services: Services, orgId: string, providerId: string): Promise<number>;
};

const checks: ProviderUsageCheck[] = [];

/** Called once at module load by each domain whose resources use an embedding provider. */
export function registerProviderUsageCheck(check: ProviderUsageCheck): void {
  if (!checks.some((c) => c.resource === check.resource)) checks.push(check);
}

/** The resources still using the provider, e.g. ["vector tables"]; empty when free. */
export async function providerUsage(services: Services, orgId: string, providerId: string): Promise<string[]> {
  const counts = await Promise.all(checks.map(async (c) => [c.resource, await c.count(services, orgId, providerId)] as const));
  return counts.filter(([, n]) => n > 0).map(([resource]) => resource);
}
