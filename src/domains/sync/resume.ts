// Where a backfill asked for by hand starts (docs/vector-tables.md#backfill, issue 12): from the checkpoint the
// table's last fill task left when that task failed for good, not from row 0, so a table whose
// backfill kept failing does not pay again for the rows it already stored. The vector-tables API
// asks through services.engine.resumePoint: what a checkpoint covers is the engine's knowledge.
import { and, desc, eq, inArray, sql } from "drizzle-orm";
import { tasks } from "../../scheduler/tables.ts";
import type { DbOrTx } from "../../scheduler/types.ts";
import { FILL_TASK_TYPES } from "../tasks/kinds.ts";
import { servesConfig } from "../vector-tables/state.ts";
import type { VectorTableRow } from "../vector-tables/tables.ts";
import type { FillProgress } from "./fill.ts";

/**
 * The progress to give a new `backfill` of `table`, or undefined to start from zero. Only a failed
 * backfill of the live generation at the table's current configuration qualifies: its checkpoint
 * covers rows stored in that generation with that configuration, exactly what a crash-resume
 * trusts. A re-backfill's checkpoint names a generation that was dropped when it failed, and when
 * a re-backfill is owed the new task builds a new generation anyway.
 */
export async function resumeFrom(db: DbOrTx, table: VectorTableRow): Promise<FillProgress | undefined> {
  if (!servesConfig(table)) return undefined;
  const [last] = await db
    .select()
    .from(tasks)
    .where(and(eq(tasks.targetId, table.id), inArray(tasks.taskType, [...FILL_TASK_TYPES])))
    .orderBy(desc(tasks.createdAt), desc(sql`rowid`))
    .limit(1);
  if (!last || last.status !== "failed" || last.taskType !== "backfill") return undefined;
  const payload = last.payload as { config_version?: number };
  const progress = last.progress as FillProgress;
  if (payload.config_version !== table.configVersion || progress.generation !== undefined || progress.rows_processed <= 0) return undefined;
  return progress;
}
