// Start-up time of the compiled binary: spawn → first stdout line (`vecsync listening on …`),
// each run on a fresh data dir. "first run" also starts with an empty native cache (a fresh HOME),
// so it includes writing the engines out; "warm" reuses one cache.
//
//   bun run scripts/build/measure-start.ts [dist/vecsync] [--runs 5]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";

const { values, positionals } = parseArgs({ allowPositionals: true, options: { runs: { type: "string", default: "5" } } });
const binary = resolve(positionals[0] ?? "dist/vecsync");
const runs = Number(values.runs);

async function timeToListening(home: string): Promise<number> {
  const dataDir = mkdtempSync(join(tmpdir(), "vecsync-start-data-"));
  const started = performance.now();
  const proc = Bun.spawn([binary, "serve", "--port", "0", "--data-dir", dataDir], {
    cwd: dataDir,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home },
    stdout: "pipe",
    stderr: "ignore",
  });
  const reader = proc.stdout.getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`exited before listening: ${text}`);
    text += new TextDecoder().decode(value);
  }
  const elapsedMs = performance.now() - started;
  if (!text.startsWith("vecsync listening on ")) throw new Error(`unexpected first line: ${text}`);
  proc.kill("SIGTERM");
  await proc.exited;
  rmSync(dataDir, { recursive: true, force: true });
  return elapsedMs;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const first: number[] = [];
for (let i = 0; i < runs; i++) {
  const home = mkdtempSync(join(tmpdir(), "vecsync-start-home-"));
  first.push(await timeToListening(home));
  rmSync(home, { recursive: true, force: true });
}
const warmHome = mkdtempSync(join(tmpdir(), "vecsync-start-home-"));
await timeToListening(warmHome);
const warm: number[] = [];
for (let i = 0; i < runs; i++) warm.push(await timeToListening(warmHome));
rmSync(warmHome, { recursive: true, force: true });

const show = (xs: number[]) => `median ${median(xs).toFixed(0)} ms (runs: ${xs.map((x) => x.toFixed(0)).join(", ")})`;
console.log(`first run (empty native cache): ${show(first)}`);
console.log(`warm native cache:              ${show(warm)}`);
