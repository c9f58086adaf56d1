import { keyProcedure, router } from "../../../rpc/init.ts";
import { RowErrorsInput, SyncHistoryInput, SyncTableInput } from "./schemas.ts";
import { listRowErrors, listSyncHistory, startSync } from "./service.ts";

// The path parameter travels as `vector_table_id`.
export const syncRouter = router({
  history: keyProcedure.input(SyncHistoryInput).query(({ ctx, input }) => {
    const { vector_table_id, ...page } = input;
    return listSyncHistory(ctx.services, ctx.actor, vector_table_id, page);
  }),
  start: keyProcedure.input(SyncTableInput).mutation(({ ctx, input }) => startSync(ctx.services, ctx.actor, input.vector_table_id)),
  errors: keyProcedure.input(RowErrorsInput).query(({ ctx, input }) => {
    const { vector_table_id, ...page } = input;
    return listRowErrors(ctx.services, ctx.actor, vector_table_id, page);
  }),
});
