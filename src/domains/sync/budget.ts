// The vector budget (docs/vector-tables.md#vector-budget): tier `free` holds at most VECSYNC_FREE_VECTOR_BUDGET vectors per
// organization, counted across the live generations of all its managed collections.
import { eq } from "drizzle-orm";
import type { Services } from "../../services.ts";
import { DriverError } from "../../shared/errors.ts";
import { organizations } from "../organizations/tables.ts";
import { managedCollectionsOf } from "../vector-tables/repo.ts";

/** Stops a backfill or sync for good (no retry): the budget will not grow by trying again. */
export class BudgetExceededError extends DriverError {
  constructor(budget: number) {
    super(`vector budget exceeded: the free tier holds at most ${budget} vectors per organization (VECSYNC_FREE_VECTOR_BUDGET); stored vectors are kept`, { retryable: false });
    this.name = "BudgetExceededError";
  }
}

/** How many more vectors the organization may store now; Infinity for tiers without a budget. */
export async function vectorAllowance(services: Services, orgId: string): Promise<number> {
  const [org] = await services.database.db.select({ tier: organizations.tier }).from(organizations).where(eq(organizations.id, orgId));
  if (org && org.tier !== "free") return Infinity;
  let stored = 0;
  for (const collection of await managedCollectionsOf(services.database.db, orgId)) {
    if (services.vectors.hasCollection(collection)) stored += await services.vectors.count(collection);
  }
  return Math.max(0, services.config.freeVectorBudget - stored);
}
