// The sync engine as this domain's API reaches it. vector-tables owns the table; sync (the engine)
// imports vector-tables (rows, rendering, repo, state), never the reverse, so the few calls the
// API makes into the engine go through this interface: `services.engine`, built in src/wiring.ts
// from sync's functions (sync/lifecycle.ts tableEngine). Types only.
import type { Executor } from "../../db/executor.ts";
import type { DbOrTx, TaskProgress } from "../../scheduler/types.ts";
import type { VectorTableRow } from "./tables.ts";

export type TableEngine = {
  /**
   * Before the table is deleted (alone or with its organization): stops its consumer and frees
   * the change feed the source keeps for it. Best effort: an unreachable source never blocks.
   */
  stop(table: VectorTableRow): Promise<void>;
  /** Right after a resume: starts what the table wants (a cdc consumer) without waiting for a tick. */
  resumed(table: VectorTableRow): void;
  /**
   * Where a backfill asked for by hand starts: the checkpoint the table's last fill task left when
   * it failed for good, if the engine can trust it, else undefined (row 0). Reads in `db`, the
   * transaction that queues the task.
   */
  resumePoint(db: DbOrTx, table: VectorTableRow): Promise<TaskProgress | undefined>;
  /** The engine's own records of the table (rows known to render empty, its sync history), in the transaction that deletes it. */
  forget(db: Executor, table: VectorTableRow): Promise<void>;
};
