import type { Services } from "../../services.ts";

// A connection may not be deleted while vector tables read through it (SPEC 4.6, 7: 409 in_use).
// The vector-tables domain comes later and may not be imported from here, so it registers a check
// at module load, as domains do for environments (environments/usage.ts).

/** Answers how many of its resources use the connection (0 = none). */
export type ConnectionUsageCheck = {
  /** Plural resource name for the error message, e.g. "vector tables". */
  resource: string;
  count(services: Services, orgId: string, connectionId: string): Promise<number>;
};

const checks: ConnectionUsageCheck[] = [];

export function registerConnectionUsageCheck(check: ConnectionUsageCheck): void {
  if (!checks.some((c) => c.resource === check.resource)) checks.push(check);
}

/** The resources still using the connection, e.g. ["vector tables"]; empty when free. */
export async function connectionUsage(services: Services, orgId: string, connectionId: string): Promise<string[]> {
  const counts = await Promise.all(checks.map(async (c) => [c.resource, await c.count(services, orgId, connectionId)] as const));
  return counts.filter(([, n]) => n > 0).map(([resource]) => resource);
}
