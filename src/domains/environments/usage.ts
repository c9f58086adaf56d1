import type { Services } from "../../services.ts";

// An environment may not be deleted while anything lives in it (SPEC 4.4: connections or vector
// tables attached → 409 in_use). The domains owning those resources come later and may not be
// imported from here (a domain never reaches into another's tables), so each registers a check.

/** Answers how many of its resources the environment holds (0 = none). */
export type EnvironmentUsageCheck = {
  /** Plural resource name for the error message, e.g. "connections". */
  resource: string;
  count(services: Services, orgId: string, environmentId: string): Promise<number>;
};

const checks: EnvironmentUsageCheck[] = [];

/** Called once at module load by each domain whose resources live in an environment. */
export function registerEnvironmentUsageCheck(check: EnvironmentUsageCheck): void {
  if (!checks.some((c) => c.resource === check.resource)) checks.push(check);
}

/** The resources still attached to the environment, e.g. ["connections"]; empty when free. */
export async function environmentUsage(services: Services, orgId: string, environmentId: string): Promise<string[]> {
  const counts = await Promise.all(checks.map(async (c) => [c.resource, await c.count(services, orgId, environmentId)] as const));
  return counts.filter(([, n]) => n > 0).map(([resource]) => resource);
}
