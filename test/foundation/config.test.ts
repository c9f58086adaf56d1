import { describe, expect, test } from "bun:test";
import { exposureWarnings } from "../../src/serve.ts";
import { ConfigError, loadConfig, parseFlags, SERVE_FLAGS } from "../../src/config.ts";

describe("happy", () => {
  test("defaults follow docs/running.md#configuration", () => {
    const c = loadConfig({}, {});
    expect(c.port).toBe(8080);
    expect(c.host).toBe("127.0.0.1");
    expect(c.dataDir.endsWith("/data")).toBe(true);
    expect(c.databaseUrl).toBe(`file:${c.dataDir}/vecsync.db`);
    expect(c.mailOutbox).toBe(`${c.dataDir}/outbox.jsonl`);
    expect(c.syncIntervalSec).toBe(60);
    expect(c.reconcileIntervalSec).toBe(3600);
    expect(c.cdcPollMs).toBe(1000);
    expect(c.freeVectorBudget).toBe(1_000_000);
    expect(c.floatMirrorMb).toBeNull(); // the vector store's own default (512 MiB)
  });

  test("VECSYNC_FLOAT_MIRROR_MB takes 0 (every collection compact) or more", () => {
    expect(loadConfig({}, { VECSYNC_FLOAT_MIRROR_MB: "0" }).floatMirrorMb).toBe(0);
    expect(loadConfig({}, { VECSYNC_FLOAT_MIRROR_MB: "2048" }).floatMirrorMb).toBe(2048);
  });

  test("serving beyond loopback without a metrics token is warned about at start", () => {
    expect(exposureWarnings({ host: "127.0.0.1", metricsToken: null })).toEqual([]);
    expect(exposureWarnings({ host: "::1", metricsToken: null })).toEqual([]);
    expect(exposureWarnings({ host: "0.0.0.0", metricsToken: "t" })).toEqual([]);
    expect(exposureWarnings({ host: "0.0.0.0", metricsToken: null })).toEqual([expect.stringContaining("VECSYNC_METRICS_TOKEN")]);
  });

  test("flags win over environment variables", () => {
    const c = loadConfig(parseFlags(["--port", "9000", "--host=0.0.0.0"], SERVE_FLAGS), { VECSYNC_PORT: "7000", VECSYNC_HOST: "::1" });
    expect(c.port).toBe(9000);
    expect(c.host).toBe("0.0.0.0");
  });

  test("an SMTP URL switches the outbox default off unless it is set explicitly", () => {
    expect(loadConfig({}, { VECSYNC_SMTP_URL: "smtp://u:p@localhost:2525" }).mailOutbox).toBeNull();
    expect(loadConfig({}, { VECSYNC_SMTP_URL: "smtp://localhost:2525", VECSYNC_MAIL_OUTBOX: "/tmp/o.jsonl" }).mailOutbox).toBe("/tmp/o.jsonl");
  });

  test("provider URLs, host lists and the master key are read", () => {
    const key = Buffer.alloc(32, 7).toString("base64");
    const c = loadConfig({}, {
      VECSYNC_EMB_A_URL: "http://127.0.0.1:9/v1",
      VECSYNC_DENY_HOSTS: "10.0.0.0/8, example.com",
      VECSYNC_MASTER_KEY: key,
      VECSYNC_PORT: "0",
    });
    expect(c.embUrls.emb_a).toBe("http://127.0.0.1:9/v1");
    expect(c.denyHosts).toEqual(["10.0.0.0/8", "example.com"]);
    expect(c.masterKey?.equals(Buffer.alloc(32, 7))).toBe(true);
    expect(c.port).toBe(0);
  });
});

describe("errors", () => {
  test.each([
    [{ VECSYNC_PORT: "8080.5" }, "VECSYNC_PORT"],
    [{ VECSYNC_DATABASE_URL: "not a url" }, "VECSYNC_DATABASE_URL"],
    [{ VECSYNC_CDC_POLL_MS: "0" }, "VECSYNC_CDC_POLL_MS"],
    [{ VECSYNC_RECONCILE_INTERVAL: "1h" }, "VECSYNC_RECONCILE_INTERVAL"],
    [{ VECSYNC_LOG_LEVEL: "loud" }, "VECSYNC_LOG_LEVEL"],
    [{ VECSYNC_FREE_VECTOR_BUDGET: "lots" }, "VECSYNC_FREE_VECTOR_BUDGET"],
    [{ VECSYNC_FLOAT_MIRROR_MB: "-1" }, "VECSYNC_FLOAT_MIRROR_MB"],
    [{ VECSYNC_JWT_SECRET: "s".repeat(31) }, "VECSYNC_JWT_SECRET"],
  ])("%p names the variable", (env, name) => {
    expect(() => loadConfig({}, env)).toThrow(new RegExp(`^${name} must be`));
  });

  test("VECSYNC_JWT_SECRET of 32 bytes or more is taken (counted in UTF-8 bytes)", () => {
    expect(loadConfig({}, { VECSYNC_JWT_SECRET: "s".repeat(32) }).jwtSecret).toBe("s".repeat(32));
    expect(loadConfig({}, { VECSYNC_JWT_SECRET: "é".repeat(16) }).jwtSecret).toBe("é".repeat(16));
    expect(() => loadConfig({}, { VECSYNC_JWT_SECRET: "é".repeat(15) })).toThrow("at least 32 bytes");
  });

  test("flags without values or unknown flags are refused", () => {
    expect(() => parseFlags(["--port"], SERVE_FLAGS)).toThrow(ConfigError);
    expect(() => parseFlags(["--nope", "1"], SERVE_FLAGS)).toThrow("unknown flag --nope");
    expect(() => parseFlags(["stray"], SERVE_FLAGS)).toThrow('unexpected argument "stray"');
  });
});
