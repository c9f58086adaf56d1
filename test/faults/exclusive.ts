// docs/running.md#one-process against a running world (issue 12, 10): a second `serve` on the same data dir, or on
// the port already bound, exits 2 with a line naming the holder (its pid) or the address, and the
// first process keeps serving.
import { tempDir } from "../harness.ts";
import type { Run } from "./run.ts";
import { spawnService, type Spawned } from "./service.ts";

const EXIT_LIMIT_MS = 10_000;

async function refused(run: Run, label: string, second: Spawned, names: RegExp): Promise<void> {
  // Listening means it did not refuse: stop it at once, before it writes beside the first.
  const url = await second.listening(EXIT_LIMIT_MS);
  if (url || second.alive()) await second.kill("SIGKILL");
  const said = `${second.stdoutText()}\n${second.stderrTail()}`.trim().slice(-300);
  if (url) run.fail("second_process_runs", `${label}: it listens on ${url}`);
  else if (second.proc.signalCode === "SIGKILL") run.fail("second_process_runs", `${label}: neither listening nor exited ${EXIT_LIMIT_MS} ms after spawn`);
  else if (second.proc.exitCode !== 2) run.fail("second_process_exit", `${label}: exit ${second.proc.exitCode ?? second.proc.signalCode}, not 2; it said ${JSON.stringify(said)}`);
  else if (!names.test(said)) run.fail("second_process_message", `${label}: exit 2 without naming ${names}; it said ${JSON.stringify(said)}`);
}

export async function checkExclusive(run: Run): Promise<void> {
  const { world } = run;
  const first = world.service;
  if (!first) return;
  const env = { VECSYNC_EMB_A_URL: world.fake.url, VECSYNC_SYNC_INTERVAL: "1" };
  run.phase = "a second serve on the same data dir";
  await refused(run, run.phase, spawnService(world.dataDir, env), new RegExp(`\\b${first.proc.pid}\\b`));
  run.phase = "a second serve on the bound port";
  using other = tempDir("vecsync-faults-port-");
  const port = Number(new URL(world.url).port);
  await refused(run, run.phase, spawnService(other.path, env, port), new RegExp(`:${port}\\b`));
  const ready = await fetch(`${world.url}/readyz`).then((r) => r.status, () => 0);
  if (ready !== 200) run.fail("first_process_disturbed", `after the second serves, the first answers /readyz ${ready}`);
}
