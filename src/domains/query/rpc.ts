import { keyProcedure, router } from "../../../rpc/init.ts";
import { ENVIRONMENT_HEADER } from "../environments/service.ts";
import { QueryInput } from "./schemas.ts";
import { queryVectorTable } from "./service.ts";

// A read (any key permission), but a mutation on the wire: its input is a body, not a URL.
export const queryRouter = router({
  search: keyProcedure.input(QueryInput).mutation(({ ctx, input }) => {
    const { vector_table_id, environment_id, ...body } = input;
    return queryVectorTable(ctx.services, ctx.actor, vector_table_id, body, environment_id ?? ctx.headers.get(ENVIRONMENT_HEADER));
  }),
});
