// One service process of a fault run, spawned without waiting for it: the harness's startProcess
// waits for the `listening` line, but a fault schedule must be able to kill a process during its
// start-up (index load, rebuild, the checkpoint after it), so here spawning and "it listens" are
// two steps. The data dir belongs to the fault world and survives every process.
import { join } from "node:path";
import { BUN, ROOT } from "../harness.ts";

export type Spawned = {
  proc: Bun.Subprocess<"ignore", "pipe", "pipe">;
  /** The URL once the `listening` line came; null if the process exited or timed out first. */
  listening(timeoutMs: number): Promise<string | null>;
  /** The last few KB of stderr (native aborts such as `free(): corrupted unsorted chunks` land here). */
  stderrTail(): string;
  stdoutText(): string;
  alive(): boolean;
  /** How it died, in a line or two: what it printed before Bun's crash banner, and the panic line. */
  death(): string;
  kill(signal: NodeJS.Signals): Promise<number | null>;
};

const TAIL_BYTES = 4096;

function reader(stream: ReadableStream<Uint8Array>, keepAll: boolean) {
  let text = "";
  const lines: ((line: string) => void)[] = [];
  const done = (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) {
      text += decoder.decode(chunk, { stream: true });
      if (!keepAll && text.length > 4 * TAIL_BYTES) text = text.slice(-TAIL_BYTES);
      if (text.includes("\n")) for (const l of lines.splice(0)) l(text.slice(0, text.indexOf("\n")));
    }
  })().catch(() => {});
  return {
    text: () => text,
    firstLine: () => new Promise<string>((resolve) => (text.includes("\n") ? resolve(text.slice(0, text.indexOf("\n"))) : lines.push(resolve))),
    done,
  };
}

export function spawnService(dataDir: string, env: Record<string, string>, port = 0): Spawned {
  const proc = Bun.spawn([BUN, join(ROOT, "src/main.ts"), "serve", "--port", String(port), "--data-dir", dataDir], {
    cwd: ROOT,
    env: { ...process.env, VECSYNC_LOG_LEVEL: "warn", ...env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  // stdout only carries the listening line and access logs at warn level; kept whole but small.
  const out = reader(proc.stdout, false);
  const err = reader(proc.stderr, false);
  return {
    proc,
    async listening(timeoutMs) {
      let timer: Timer | undefined;
      const line = await Promise.race([
        out.firstLine(),
        proc.exited.then(() => null),
        new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), timeoutMs))),
      ]);
      clearTimeout(timer);
      return line?.match(/^vecsync listening on (http:\/\/\S+)$/)?.[1] ?? null;
    },
    stderrTail: () => err.text().slice(-TAIL_BYTES),
    stdoutText: out.text,
    alive: () => proc.exitCode === null && proc.signalCode === null,
    death: () => crashSummary(`exit ${proc.exitCode ?? proc.signalCode}`, err.text()),
    async kill(signal) {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
      await proc.exited;
      return proc.exitCode;
    },
  };
}

function crashSummary(how: string, stderr: string): string {
  const banner = stderr.indexOf("=".repeat(20));
  const before = (banner === -1 ? stderr : stderr.slice(0, banner)).trim().split("\n").slice(-6).join(" | ");
  const panic = stderr.match(/panic\([^)]*\): [^\n]*/)?.[0] ?? "";
  return `${how}: ${before.slice(-600)}${panic ? ` [${panic}]` : ""}`;
}
