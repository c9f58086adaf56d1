// Issue 12 (item 7): with the data dir on a full disk, writes answered 500 `internal`, and with the
// log on the same disk the process exited and crash-looped on every start. CONTRACT 3: writes answer
// 507 `storage_full`, reads keep answering, logging never kills the process, and the service
// recovers by itself once space returns. A real full filesystem: a small tmpfs (test/helpers).
import { expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import { startProcess, type RunningProcess } from "../harness.ts";
import { apiOf, must, signUp, type Api } from "../e2e/helpers.ts";
import { mountSmallDisk } from "../helpers/small-disk.ts";

setDefaultTimeout(60_000);

// Info level: every request writes an access-log line to the full disk.
const onDisk = (dataDir: string) => ({ dataDir, stderrTo: join(dataDir, "vecsync.log"), env: { VECSYNC_LOG_LEVEL: "info" } });

async function expectStorageFull(api: Api, key: string, url: string) {
  const rest = await api.call("POST", "/v1/api-keys", { name: "while-full", permission: "full" });
  expect(rest.status).toBe(507);
  expect(rest.body.error.code).toBe("storage_full");
  const rpc = await fetch(`${url}/trpc/apiKeys.create`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
    body: JSON.stringify({ name: "while-full-rpc", permission: "full" }),
  });
  expect(rpc.status).toBe(507);
  expect(((await rpc.json()) as any).error.data.vecsync.code).toBe("storage_full");
}

async function expectReads(proc: RunningProcess, api: Api) {
  expect((await api.call("GET", "/v1/api-keys")).status).toBe(200);
  expect((await fetch(`${proc.url}/healthz`)).status).toBe(200);
  expect(proc.proc.exitCode).toBeNull();
}

test("full disk: writes 507, reads 200, the process lives, restarts and recovers when space returns", async () => {
  using disk = mountSmallDisk(16);
  let key: string;
  {
    await using first = await startProcess(onDisk(disk.path));
    const { api: signedUp } = await signUp(first);
    key = must(await signedUp.call("POST", "/v1/api-keys", { name: "test", permission: "full" }), 201).key;
    const api = apiOf(first.url, { authorization: `Bearer ${key}` });
    disk.fill();
    await expectStorageFull(api, key, first.url);
    await expectReads(first, api);
    expect(await first.stop("SIGTERM")).toBe(0); // shutdown's checkpoint fails quietly
  }
  // Still full: the next start must serve, not crash (a supervisor would restart it in a loop).
  await using second = await startProcess(onDisk(disk.path));
  const api = apiOf(second.url, { authorization: `Bearer ${key}` });
  await expectReads(second, api);
  await expectStorageFull(api, key, second.url);
  disk.free();
  must(await api.call("POST", "/v1/api-keys", { name: "after", permission: "full" }), 201);
  expect((await api.call("GET", "/v1/api-keys")).body.data.map((k: { name: string }) => k.name)).toContain("after");
});
