// `vecsync tasks [--watch]`: the task table once, as JSON, or redrawn until interrupted (watch.ts).
import { ServiceClient } from "./api.ts";
import { usage } from "./errors.ts";
import { clientOptions, flagsOf } from "./options.ts";
import { readTasks, renderTasks } from "./task-view.ts";
import { watch } from "./watch.ts";

export const TASKS_HELP = `usage: vecsync tasks [--watch [--until-done]] [--json] [--url URL] [--api-key KEY]

The organization's pending and running tasks and those finished in the last 24 hours, newest
first, with a progress bar for running backfills and re-backfills.

  --watch         redraw every second until interrupted (Ctrl-C)
  --until-done    with --watch: stop once no task is pending or running; exit 1 if a task
                  seen running has failed for good
  --json          print the answer of GET /v1/tasks as it came
  --url URL       VECSYNC_URL, default http://127.0.0.1:8080
  --api-key KEY   VECSYNC_API_KEY (prefer the variable: flags show in ps)`;

export async function runTasks(args: string[], env: Record<string, string | undefined>): Promise<number> {
  const flags = flagsOf(args, { strings: ["url", "api-key"], booleans: ["watch", "until-done", "json", "help"] });
  if (flags.booleans.has("help")) {
    console.log(TASKS_HELP);
    return 0;
  }
  const watching = flags.booleans.has("watch") || flags.booleans.has("until-done");
  if (watching && flags.booleans.has("json")) throw usage("--json prints one answer; it does not go with --watch");
  const client = new ServiceClient(clientOptions(flags, env));
  if (watching) return watch(client, { untilDone: flags.booleans.has("until-done"), out: process.stdout });
  if (flags.booleans.has("json")) {
    console.log(JSON.stringify(await client.get("/v1/tasks"), null, 2));
    return 0;
  }
  console.log(renderTasks(await readTasks(client), Date.now()).join("\n"));
  return 0;
}
