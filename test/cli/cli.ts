// Runs the CLI as a user does: `bun src/main.ts <command>` in a child process, its output and exit
// code collected. Asynchronous on purpose: the fakes some tests point the service at run in this
// process and must keep answering while the command runs.
import { join } from "node:path";
import { BUN, ROOT } from "../harness.ts";

export type CliRun = { code: number; stdout: string; stderr: string };

export async function runCli(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  const proc = Bun.spawn([BUN, join(ROOT, "src/main.ts"), ...args], {
    cwd: ROOT,
    env: { ...process.env, VECSYNC_LOG_LEVEL: "silent", ...env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}

/** One line on stderr, as docs/running.md#exit-codes promises for every refusal and failure. */
export function oneLine(run: CliRun): string {
  const lines = run.stderr.trim().split("\n");
  if (lines.length !== 1) throw new Error(`expected one stderr line, got ${lines.length}:\n${run.stderr}`);
  return lines[0]!;
}
