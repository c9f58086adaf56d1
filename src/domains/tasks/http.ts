import { defineRoute } from "../../http/route.ts";
import { ListTasks, Task, TaskList } from "./schemas.ts";
import { getTask, listTasks } from "./service.ts";

const tag = "Tasks";

export const taskRoutes = [
  defineRoute({
    method: "GET",
    path: "/v1/tasks",
    tag,
    summary: "List pending and running tasks and those finished in the last 24 hours, newest first",
    auth: "api_key",
    query: ListTasks,
    response: TaskList,
    handler: ({ services, actor, query }) => listTasks(services, actor, query),
  }),
  defineRoute({
    method: "GET",
    path: "/v1/tasks/:task_id",
    tag,
    summary: "Get a task",
    auth: "api_key",
    response: Task,
    handler: ({ services, actor, params }) => getTask(services, actor, params.task_id),
  }),
];
