// `vecsync tasks --watch`: the task table redrawn every second. On a terminal each frame replaces
// the last in place (cursor up over the previous frame's lines, erase below), lines cut to the
// terminal's width so that a wrapped line cannot throw the count off; elsewhere (a log, a pipe) a
// frame is printed only when something in it changed.
import type { ServiceClient } from "./api.ts";
import { failure } from "./errors.ts";
import { fit } from "./render.ts";
import { isActive, readTasks, renderTasks, type Task } from "./task-view.ts";

/** The redraw period the CLI reference promises ("every second"). */
const REDRAW_MS = 1_000;

type Terminal = { write(text: string): unknown; isTTY?: boolean; columns?: number };

const clock = (ms: number) => new Date(ms).toISOString().slice(11, 19);

export async function watch(client: ServiceClient, opts: { untilDone: boolean; out: Terminal }): Promise<number> {
  const { out, untilDone } = opts;
  const tty = Boolean(out.isTTY);
  const seenActive = new Set<string>();
  let drawn = 0;
  let lastPlain = "";
  let last: Task[] = [];
  for (;;) {
    const view = await readTasks(client);
    last = view.tasks;
    for (const t of view.tasks) if (isActive(t)) seenActive.add(t.id);
    const now = Date.now();
    const header = `vecsync tasks · ${client.options.url} · ${clock(now)} UTC · ${untilDone ? "until none is pending or running" : "Ctrl-C to stop"}`;
    const body = renderTasks(view, now);
    if (tty) {
      const lines = [header, ...body].map((l) => fit(l, out.columns));
      out.write(`${drawn ? `\x1b[${drawn}A\x1b[J` : ""}${lines.join("\n")}\n`);
      drawn = lines.length;
    } else if (body.join("\n") !== lastPlain) {
      lastPlain = body.join("\n");
      out.write(`${header}\n${lastPlain}\n\n`);
    }
    if (untilDone && !view.tasks.some(isActive)) break;
    await Bun.sleep(REDRAW_MS);
  }
  const failed = last.filter((t) => seenActive.has(t.id) && t.status === "failed");
  if (failed.length) throw failure(failed.map((t) => `task ${t.id} (${t.task_type}) failed: ${(t.last_error ?? "no error recorded").replace(/\s+/g, " ")}`).join("; "));
  return 0;
}
