import { publicProcedure, router } from "../../../rpc/init.ts";
import { Refresh, RequestCode, Verify } from "./schemas.ts";
import { refresh, requestCode, verifyCode } from "./service.ts";

export const authRouter = router({
  requestCode: publicProcedure.input(RequestCode).mutation(({ ctx, input }) => requestCode(ctx.services, input, ctx.ip)),
  verify: publicProcedure.input(Verify).mutation(({ ctx, input }) => verifyCode(ctx.services, input, ctx.ip)),
  refresh: publicProcedure.input(Refresh).mutation(({ ctx, input }) => refresh(ctx.services, input)),
});
