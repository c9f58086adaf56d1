import { keyProcedure, router } from "../../../rpc/init.ts";
import { ENVIRONMENT_HEADER } from "../environments/service.ts";
import { getSyncStatus, pauseSync, resumeSync, startBackfill } from "./control.ts";
import { CreateVectorTableInput, ListVectorTablesInput, UpdateVectorTableInput, VectorTableIdParam } from "./schemas.ts";
import { createVectorTable, deleteVectorTable, getSourceSchema, getVectorTable, listVectorTables } from "./service.ts";
import { updateVectorTable } from "./update.ts";

// The X-Environment-Id header travels as `environment_id` here; the header is still honoured
// when the field is absent, as on REST.
export const vectorTablesRouter = router({
  create: keyProcedure.input(CreateVectorTableInput).mutation(({ ctx, input }) => {
    const { environment_id, ...body } = input;
    return createVectorTable(ctx.services, ctx.actor, body, environment_id ?? ctx.headers.get(ENVIRONMENT_HEADER));
  }),
  list: keyProcedure.input(ListVectorTablesInput.or("undefined")).query(({ ctx, input }) => {
    const { environment_id, ...page } = input ?? {};
    return listVectorTables(ctx.services, ctx.actor, page, environment_id ?? ctx.headers.get(ENVIRONMENT_HEADER));
  }),
  get: keyProcedure.input(VectorTableIdParam).query(({ ctx, input }) => getVectorTable(ctx.services, ctx.actor, input.vector_table_id)),
  update: keyProcedure.input(UpdateVectorTableInput).mutation(({ ctx, input }) => {
    const { vector_table_id, ...changes } = input;
    return updateVectorTable(ctx.services, ctx.actor, vector_table_id, changes);
  }),
  delete: keyProcedure.input(VectorTableIdParam).mutation(({ ctx, input }) => deleteVectorTable(ctx.services, ctx.actor, input.vector_table_id)),
  schema: keyProcedure.input(VectorTableIdParam).query(({ ctx, input }) => getSourceSchema(ctx.services, ctx.actor, input.vector_table_id)),
  backfill: keyProcedure.input(VectorTableIdParam).mutation(({ ctx, input }) => startBackfill(ctx.services, ctx.actor, input.vector_table_id)),
  syncStatus: keyProcedure.input(VectorTableIdParam).query(({ ctx, input }) => getSyncStatus(ctx.services, ctx.actor, input.vector_table_id)),
  pause: keyProcedure.input(VectorTableIdParam).mutation(({ ctx, input }) => pauseSync(ctx.services, ctx.actor, input.vector_table_id)),
  resume: keyProcedure.input(VectorTableIdParam).mutation(({ ctx, input }) => resumeSync(ctx.services, ctx.actor, input.vector_table_id)),
});
