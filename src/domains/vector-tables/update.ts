import type { Services } from "../../services.ts";
import type { KeyActor } from "../../shared/actor.ts";
import { requireWriteAccess } from "../../shared/authz.ts";
import { isUniqueViolation } from "../../db/executor.ts";
import type { DbOrTx } from "../../scheduler/types.ts";
import { connectionOf } from "../connections/service.ts";
import type { FillPayload } from "../tasks/kinds.ts";
import { columnProblems, sourceProblems } from "./checks.ts";
import { normalizeColumns, presentVectorTable, sameColumns } from "./present.ts";
import { findVectorTableByName, renameVectorTable, type VectorTableRow } from "./repo.ts";
import type { UpdateVectorTable, VectorTable } from "./schemas.ts";
import { embeddingChoiceProblems, foldsCase, guardName, nameTaken, throwIfProblems, vectorTableOf } from "./service.ts";
import { readSourceSchema } from "./source-schema.ts";
import { REBACKFILL } from "../tasks/kinds.ts";
import { changeConfiguration, type Configuration } from "./state.ts";
import { generationSpec } from "./render.ts";

/** At most one backfill or rebackfill pending or running per table, enforced by a unique index. */
export const backfillKey = (vectorTableId: string) => `backfill:${vectorTableId}`;

/**
 * Queues the rebackfill of a changed configuration, in the PUT's transaction. When a backfill or
 * rebackfill of the table is already active the index refuses a second one, and that is fine: the
 * active task carries the change. This hand-off has no window, by construction:
 *  - the active task re-reads `config_version` after every page and starts over on a new one;
 *  - after its last read it ends only through finishFill (state.ts), one transaction that
 *    completes the task and turns the table `synced` only if `config_version` is still the one it
 *    built. SQLite runs write transactions one at a time, so either this PUT commits first (the
 *    guard fails, nothing commits, the still-active task builds the new version) or finishFill
 *    does (the task is no longer active, so the enqueue below succeeds and a new task builds it);
 *  - a task that fails for good leaves the table `error` (or `paused`) with the version unserved,
 *    and a POST backfill then builds it (as a re-backfill: servesConfig is false).
 * Nothing waits as `pending_rebackfill` without an active task, so no sweep is needed.
 */
async function enqueueRebackfill(services: Services, tx: DbOrTx, row: VectorTableRow, configVersion: number): Promise<void> {
  const payload: FillPayload = { vector_table_id: row.id, config_version: configVersion };
  try {
    await services.tasks.enqueue(tx, REBACKFILL, { orgId: row.orgId, targetId: row.id, payload, exclusiveKey: backfillKey(row.id) });
  } catch (err) {
    // SQLite undoes only the failed statement; the surrounding transaction goes on.
    if (!isUniqueViolation(err)) throw err;
  }
}

/**
 * PUT /v1/vector-tables/{id}: a `full` key. Changing columns, model or dimensions (validated as on
 * creation, columns against the live source schema) sets `pending_rebackfill`, bumps
 * `config_version` and queues a `rebackfill`; queries keep answering from the old vectors.
 */
export async function updateVectorTable(services: Services, actor: KeyActor, id: string, input: UpdateVectorTable): Promise<VectorTable> {
  requireWriteAccess(actor);
  const row = await vectorTableOf(services, actor.orgId, id);
  const columns = input.columns === undefined ? row.columns : normalizeColumns(input.columns);
  const model = input.embedding_model ?? row.embeddingModel;
  const dimensions = input.embedding_dimensions ?? row.embeddingDimensions;
  const columnsChanged = !sameColumns(columns, row.columns);
  const configChanged = columnsChanged || model !== row.embeddingModel || dimensions !== row.embeddingDimensions;

  if (input.columns !== undefined) throwIfProblems(columnProblems(columns));
  const db = services.database.db;
  if (input.name !== undefined && input.name !== row.name && (await findVectorTableByName(db, actor.orgId, input.name))) throw nameTaken(input.name);
  if (model !== row.embeddingModel || dimensions !== row.embeddingDimensions) {
    const connection = await connectionOf(services, actor.orgId, row.connectionId);
    const choice = { mode: row.mode, connection, environmentId: row.environmentId, providerId: row.embeddingProviderId, model, dimensions };
    throwIfProblems(await embeddingChoiceProblems(services, actor.orgId, choice));
  }
  if (columnsChanged) {
    const connection = await connectionOf(services, actor.orgId, row.connectionId);
    const schema = await readSourceSchema(services, connection, row.sourceTable);
    throwIfProblems(sourceProblems(schema, row.sourceTable, undefined, columns, foldsCase(connection)));
    if (row.mode === "platform" && services.platform.supports(connection.provider)) {
      // The new columns must fit a platform table too (no reserved name, not the key again).
      const store = await services.platform.of(connection);
      const spec = { ...generationSpec({ ...row, columns }), primaryKey: { name: row.primaryKeyColumn, type: "text" } };
      throwIfProblems(store.specProblems(spec).map((message) => ({ path: "columns", message })));
    }
  }

  const name = input.name !== undefined && input.name !== row.name ? input.name : undefined;
  if (name === undefined && !configChanged) return presentVectorTable(row);
  const now = services.clock.now().toISOString();

  await guardName(name ?? row.name, () =>
    db.transaction(async (tx) => {
      if (name !== undefined && !configChanged) return renameVectorTable(tx, actor.orgId, row.id, name, now);
      const config: Configuration = { columns, embeddingModel: model, embeddingDimensions: dimensions, ...(name === undefined ? {} : { name }) };
      await enqueueRebackfill(services, tx, row, await changeConfiguration(tx, actor.orgId, row.id, config, now));
    }),
  );
  services.logger.info({ org_id: actor.orgId, vector_table_id: id, changed: Object.keys(input), rebackfill: configChanged }, "vector table updated");
  return presentVectorTable(await vectorTableOf(services, actor.orgId, id));
}
