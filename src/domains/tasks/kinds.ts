// The task types the service knows (the API's `task_type`), each declared once: its name, its
// default priority (lower runs first) and attempts, and the schema of its payload. Domains bind a
// handler to a kind when the composition root registers it; enqueueing names the kind, so a
// payload cannot drift from what its handler validates.
import { type } from "arktype";

/** A fill (backfill or rebackfill) builds the table's `config_version`; a newer one restarts it. */
export const FillPayload = type({ vector_table_id: "string", config_version: "number.integer" });
export type FillPayload = typeof FillPayload.infer;

export const OrgDeletionPayload = type({ organization_id: "string" });
export type OrgDeletionPayload = typeof OrgDeletionPayload.infer;

export const TASK_TYPES = ["backfill", "rebackfill", "org_deletion"] as const;
export type TaskTypeName = (typeof TASK_TYPES)[number];

/** The task types that fill a vector table's collection; at most one is active per table. */
export const FILL_TASK_TYPES = ["backfill", "rebackfill"] as const satisfies readonly TaskTypeName[];
export type FillTaskType = (typeof FILL_TASK_TYPES)[number];
