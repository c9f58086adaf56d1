// The service the demo talks to: the same composition as `vecsync serve` (src/runtime.ts), run in
// this process on a temp data dir and a free port, so the demo needs nothing else running and
// works the same from the binary and from a checkout.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { resolveConfig } from "../config.ts";
import { startService } from "../runtime.ts";
import { createLogger } from "../shared/log.ts";

export type DemoService = {
  url: string;
  dataDir: string;
  /** Where sign-in codes are written (no SMTP in the demo). */
  outbox: string;
  stop(keepData: boolean): Promise<void>;
};

export async function startDemoService(env: Record<string, string>): Promise<DemoService> {
  const dataDir = mkdtempSync(join(tmpdir(), "vecsync-demo-"));
  try {
    const config = resolveConfig({ "data-dir": dataDir, port: "0", host: "127.0.0.1" }, env);
    const running = await startService(config, createLogger(config.logLevel));
    return {
      url: running.url,
      dataDir,
      outbox: config.mailOutbox!,
      async stop(keepData) {
        await running.stop();
        if (!keepData) rmSync(dataDir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
}
