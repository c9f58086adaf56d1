import { keyProcedure, router } from "../../../rpc/init.ts";
import { ListTasks, TaskIdParam } from "./schemas.ts";
import { getTask, listTasks } from "./service.ts";

export const tasksRouter = router({
  list: keyProcedure.input(ListTasks.or("undefined")).query(({ ctx, input }) => listTasks(ctx.services, ctx.actor, input ?? {})),
  get: keyProcedure.input(TaskIdParam).query(({ ctx, input }) => getTask(ctx.services, ctx.actor, input.task_id)),
});
