import { keyProcedure, router } from "../../../rpc/init.ts";
import { ENVIRONMENT_HEADER } from "../environments/service.ts";
import { ConnectionIdParam, CreateConnectionInput, ListConnectionsInput, UpdateConnectionInput } from "./schemas.ts";
import { createConnection, deleteConnection, getConnection, listConnections, testConnection, updateConnection } from "./service.ts";

// The path's provider and the X-Environment-Id header travel as input fields here; the header is
// still honoured when the field is absent, as on REST.
export const connectionsRouter = router({
  create: keyProcedure.input(CreateConnectionInput).mutation(({ ctx, input }) => {
    const { provider, environment_id, ...body } = input;
    return createConnection(ctx.services, ctx.actor, provider, body, environment_id ?? ctx.headers.get(ENVIRONMENT_HEADER));
  }),
  list: keyProcedure.input(ListConnectionsInput.or("undefined")).query(({ ctx, input }) => {
    const { environment_id, ...page } = input ?? {};
    return listConnections(ctx.services, ctx.actor, page, environment_id ?? ctx.headers.get(ENVIRONMENT_HEADER));
  }),
  get: keyProcedure.input(ConnectionIdParam).query(({ ctx, input }) => getConnection(ctx.services, ctx.actor, input.connection_id)),
  update: keyProcedure.input(UpdateConnectionInput).mutation(({ ctx, input }) => {
    const { connection_id, ...changes } = input;
    return updateConnection(ctx.services, ctx.actor, connection_id, changes);
  }),
  delete: keyProcedure.input(ConnectionIdParam).mutation(({ ctx, input }) => deleteConnection(ctx.services, ctx.actor, input.connection_id)),
  test: keyProcedure.input(ConnectionIdParam).mutation(({ ctx, input }) => testConnection(ctx.services, ctx.actor, input.connection_id)),
});
