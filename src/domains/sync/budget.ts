// The vector budget (docs/vector-tables.md#vector-budget): tier `free` holds at most VECSYNC_FREE_VECTOR_BUDGET vectors per
// organization, counted across the live generations of all its vector tables, managed and platform.
import { eq } from "drizzle-orm";
import type { Services } from "../../services.ts";
import { DriverError } from "../../shared/errors.ts";
import { organizations } from "../organizations/tables.ts";
import { organizationVectorTables } from "../vector-tables/repo.ts";
import { hasStorage } from "../vector-tables/state.ts";
import { tableStore } from "../vector-tables/storage.ts";
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
 * A table's stored vectors: the managed store's in-memory count; a platform table's count in its
 * own database, or, when that database cannot be reached now, the `synced_rows` last recorded
 * (one customer database being down must not stop the sync of the organization's other tables).
 */
async function storedVectors(services: Services, table: VectorTableRow): Promise<number> {
  if (table.mode === "managed") return services.vectors.hasCollection(table.vectorstoreCollection) ? services.vectors.count(table.vectorstoreCollection) : 0;
  if (!hasStorage(table)) return 0;
  try {
    const store = await tableStore(services, table);
    return (await store.exists()) ? await store.count() : 0;
  } catch (err) {
    services.logger.warn({ err, vector_table_id: table.id }, "vector budget: platform table not reachable, counting its last synced_rows");
    return table.syncedRows;
  }
}
