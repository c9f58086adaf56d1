// The vector budget (docs/vector-tables.md#vector-budget): tier `free` holds at most VECSYNC_FREE_VECTOR_BUDGET vectors per
// organization, counted across the live generations of all its vector tables, managed and platform.
import { eq } from "drizzle-orm";
import type { Services } from "../../services.ts";
import { DriverError } from "../../shared/errors.ts";
import { organizations } from "../organizations/tables.ts";
import { organizationVectorTables } from "../vector-tables/repo.ts";
import type { VectorTableRow } from "../vector-tables/tables.ts";

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
  for (const table of await organizationVectorTables(services.database.db, orgId)) stored += await storedVectors(services, table);
  return Math.max(0, services.config.freeVectorBudget - stored);
}

/**
 * A table's stored vectors: the managed store's count (in memory); a platform table's last
 * recorded `synced_rows` (the store's own count when it was written, after every page, pass and
 * change batch), not a count(*) in the customer's database: the allowance is asked before every
 * change batch of every table, and one slow or unreachable database must not hold up the others.
 * It includes rows with empty text, so it errs on the side of the budget.
 */
async function storedVectors(services: Services, table: VectorTableRow): Promise<number> {
  if (table.mode === "platform") return table.syncedRows;
  return services.vectors.hasCollection(table.vectorstoreCollection) ? services.vectors.count(table.vectorstoreCollection) : 0;
}
