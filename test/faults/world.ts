// The world of one fault run: a throwaway Postgres source of `rows` rows, the fake emb_a provider
// (real HTTP wire format, deterministic vectors: a text queried with its own words scores 1.0),
// one data dir that outlives every service process, and an organization, connection, provider
// and vector table made over the API: batch, or cdc (the source's replication slot and
// publication `vecsync_<table id>`). Dispose kills the process, drops what replication slots the
// database still has (Postgres refuses to drop a database with one), stops the fake, drops the
// database and removes the data dir, whatever failed before.
import { feedName } from "../../src/drivers/sources/postgres-cdc.ts";
import { PG_ADMIN_URL, tempDir, throwawayPostgres, type RunningProcess, type TempDir, type ThrowawayDatabase } from "../harness.ts";
import { apiOf, must, signUp, type Api } from "../e2e/helpers.ts";
import { startFakeEmbeddings, type FakeEmbeddings } from "../fakes/embeddings/server.ts";
import { MODELS } from "./schedule.ts";
import { spawnService, type Spawned } from "./service.ts";
import { COLUMN_VARIANTS, createSource, TABLE } from "./workload.ts";

const API_KEY = "sk-faults-0123456789";
/** The health promise (docs/running.md#health) checked after every restart: listening, then /readyz 200, within 30 s. */
export const START_LIMIT_MS = 30_000;

/**
 * A cdc world's service reconciles an hour apart, so what reaches the index between faults is the
 * stream's doing. VECSYNC_RECONCILE_INTERVAL is the cdc tables' reconciling pass (issue 14); code
 * from before it reconciles cdc tables every VECSYNC_SYNC_INTERVAL, hence both (a world holds no
 * batch table). An interval of an hour is croner's "minutes 0 and 59 of every hour": a run across
 * such a minute may get one pass.
 */
const STREAM_ONLY = { VECSYNC_RECONCILE_INTERVAL: "3600", VECSYNC_SYNC_INTERVAL: "3600" };

export type StartOutcome = { ok: true; url: string; ms: number } | { ok: false; problem: string };

/** Worlds not yet disposed, for a Ctrl-C of the bench (disposeAllWorlds). */
const open = new Set<FaultWorld>();

export async function disposeAllWorlds(): Promise<void> {
  await Promise.all([...open].map((w) => w[Symbol.asyncDispose]()));
}

export class FaultWorld implements AsyncDisposable {
  service: Spawned | null = null;
  url = "";
  api: Api = apiOf("");
  key = "";
  tableId = "";
  restarts = 0;
  kills = 0;

  private constructor(
    readonly pg: ThrowawayDatabase,
    readonly fake: FakeEmbeddings,
    readonly dir: TempDir,
    readonly rows: number,
    readonly cdc: boolean,
    readonly compact: boolean,
  ) {}

  static async open(rows: number, opts: { cdc?: boolean; compact?: boolean } = {}): Promise<FaultWorld> {
    const pg = await throwawayPostgres();
    let fake: FakeEmbeddings | undefined;
    try {
      await createSource(pg.sql, rows);
      // record: false — a long run would otherwise keep every request in memory. The stated
      // limits lift the service's governor above its default tier (~50 requests/s), which would
      // otherwise pace the thousands of checking queries, not the service's own work.
      const rateLimit = { requestsPerMinute: 1_000_000, tokensPerMinute: 1_000_000_000, burstSec: 6 };
      fake = await startFakeEmbeddings("emb_a", { apiKey: API_KEY, switches: { record: false, rateLimit, stateLimits: true } });
      const world = new FaultWorld(pg, fake, tempDir("vecsync-faults-"), rows, opts.cdc ?? false, opts.compact ?? false);
      open.add(world);
      return world;
    } catch (err) {
      await Promise.resolve(fake?.stop()).catch(() => {});
      await pg[Symbol.asyncDispose]();
      throw err;
    }
  }

  get dataDir(): string {
    return this.dir.path;
  }

  /** The cdc table's replication slot and publication on the source (src/drivers/sources/postgres-cdc.ts). */
  get feed(): string {
    return feedName(this.tableId);
  }

  /** Spawns a process on the data dir without waiting (kills during start-up need the handle). */
  spawn(): Spawned {
    const memory: Record<string, string> = this.compact ? { VECSYNC_FLOAT_MIRROR_MB: "0" } : {};
    this.service = spawnService(this.dataDir, { VECSYNC_EMB_A_URL: this.fake.url, ...memory, ...(this.cdc ? STREAM_ONLY : { VECSYNC_SYNC_INTERVAL: "1" }) });
    return this.service;
  }

  /** Spawns (unless already spawned) and waits for listening and /readyz 200, within 30 s in all. */
  async start(spawned = this.spawn()): Promise<StartOutcome> {
    const t0 = Date.now();
    const url = await spawned.listening(START_LIMIT_MS);
    if (!url) return { ok: false, problem: spawned.alive() ? `no listening line within ${START_LIMIT_MS} ms` : `died before listening, ${spawned.death()}` };
    this.url = url;
    this.api = apiOf(url, this.key ? { authorization: `Bearer ${this.key}` } : {});
    for (;;) {
      const status = await fetch(`${url}/readyz`).then((r) => r.status, () => 0);
      if (status === 200) return { ok: true, url, ms: Date.now() - t0 };
      if (!spawned.alive()) return { ok: false, problem: `died before /readyz 200, ${spawned.death()}` };
      if (Date.now() - t0 > START_LIMIT_MS) return { ok: false, problem: `/readyz answered ${status}, not 200, ${START_LIMIT_MS} ms after spawn` };
      await Bun.sleep(50);
    }
  }

  async stop(signal: NodeJS.Signals): Promise<number | null> {
    const s = this.service;
    if (!s) return null;
    if (signal === "SIGKILL" && s.alive()) this.kills++;
    const code = await s.kill(signal);
    this.service = null;
    return code;
  }

  /** Sign-up, connection, provider and the vector table (first model and column variant). */
  async provision(): Promise<void> {
    const { api, apiKey } = await signUp({ url: this.url, dataDir: this.dataDir } as RunningProcess);
    this.key = apiKey;
    const admin = new URL(PG_ADMIN_URL);
    const credentials = { host: "127.0.0.1", port: Number(admin.port || 5432), database: this.pg.name, user: admin.username || "postgres", password: "unused-trust-auth", ssl_mode: "disable" };
    const connection = must(await api.call("POST", "/v1/providers/db_relational/connections", { name: "source", mode: "managed", credentials }), 201);
    must(await api.call("POST", `/v1/connections/${connection.id}/test`), 200);
    const provider = must(await api.call("POST", "/v1/embedding-providers", { name: "fake-a", provider: "emb_a", api_key: API_KEY }), 201);
    const table = must(await api.call("POST", "/v1/vector-tables", {
      name: "items", connection_id: connection.id, embedding_provider_id: provider.id, source_table: TABLE, primary_key_column: "id",
      columns: COLUMN_VARIANTS[0], ...MODELS[0], sync_mode: this.cdc ? "cdc" : "batch",
    }), 201);
    this.tableId = table.id;
    this.api = api;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    if (!open.delete(this)) return;
    await this.service?.kill("SIGKILL").catch(() => {});
    this.service = null;
    await Promise.resolve(this.fake.stop()).catch(() => {});
    await Promise.resolve(this.pg[Symbol.asyncDispose]()).catch(() => {});
    this.dir[Symbol.dispose]();
  }
}
