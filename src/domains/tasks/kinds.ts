// The task types the service knows (the API's `task_type`, docs/api.md#tasks), each declared once: its
// name, its default priority (lower runs first) and max attempts (docs/api.md#tasks), and the schema of
// its payload. The composition root (src/wiring.ts) binds a handler to each kind; enqueueing names
// the kind, so a payload cannot drift from what its handler validates.
import { type } from "arktype";
import type { TaskKind } from "../../scheduler/types.ts";

/** A fill (backfill or rebackfill) builds the table's `config_version`; a newer one restarts it. */
export const FillPayload = type({ vector_table_id: "string", config_version: "number.integer" });
export type FillPayload = typeof FillPayload.infer;

export const OrgDeletionPayload = type({ organization_id: "string" });
export type OrgDeletionPayload = typeof OrgDeletionPayload.infer;

export const BACKFILL = { taskType: "backfill", priority: 3, maxAttempts: 3, payload: FillPayload } as const satisfies TaskKind<FillPayload>;
export const REBACKFILL = { taskType: "rebackfill", priority: 3, maxAttempts: 3, payload: FillPayload } as const satisfies TaskKind<FillPayload>;
export const ORG_DELETION = { taskType: "org_deletion", priority: 7, maxAttempts: 5, payload: OrgDeletionPayload } as const satisfies TaskKind<OrgDeletionPayload>;

export const TASK_TYPES = [BACKFILL.taskType, REBACKFILL.taskType, ORG_DELETION.taskType] as const;
export type TaskTypeName = (typeof TASK_TYPES)[number];

/** The task types that fill a vector table's collection; at most one is active per table. */
export const FILL_TASK_TYPES = [BACKFILL.taskType, REBACKFILL.taskType] as const satisfies readonly TaskTypeName[];
export type FillTaskType = (typeof FILL_TASK_TYPES)[number];
