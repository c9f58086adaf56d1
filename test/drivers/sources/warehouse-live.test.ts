// Opt-in: the shared contract against a real warehouse account, for what no fake can settle
// (the real dialect, INFORMATION_SCHEMA spellings, CHANGES and LAST_ALTERED timing, chunk
// downloads from cloud storage). It registers its tests only when these are set, and registers
// NOTHING otherwise (CI runs no skipped tests):
//   VECSYNC_LIVE_WAREHOUSE_ACCOUNT, VECSYNC_LIVE_WAREHOUSE_USER, VECSYNC_LIVE_WAREHOUSE_DATABASE,
//   VECSYNC_LIVE_WAREHOUSE_WAREHOUSE, and VECSYNC_LIVE_WAREHOUSE_PASSWORD or
//   VECSYNC_LIVE_WAREHOUSE_PRIVATE_KEY (PEM); optional VECSYNC_LIVE_WAREHOUSE_ROLE and
//   VECSYNC_LIVE_WAREHOUSE_URL (a private-link URL).
// Each world is a throwaway schema, dropped afterwards. The user needs CREATE SCHEMA on the
// database. Omitted contract behaviours are those of warehouse.test.ts, for the same reasons.
import { WarehouseSource, type WarehouseCredentials } from "../../../src/drivers/sources/warehouse.ts";
import { splitStatements } from "../../fakes/warehouse/sql.ts";
import { sourceContract, type SourceWorld } from "./contract.ts";

const env = process.env;
const live = (name: string) => env[`VECSYNC_LIVE_WAREHOUSE_${name}`] || undefined;

function liveCredentials(): WarehouseCredentials | null {
  const account = live("ACCOUNT");
  const user = live("USER");
  const database = live("DATABASE");
  const warehouse = live("WAREHOUSE");
  const password = live("PASSWORD");
  const privateKey = live("PRIVATE_KEY");
  if (!account || !user || !database || !warehouse || (!password && !privateKey)) return null;
  return {
    authMethod: privateKey ? "key_pair" : "password",
    account,
    user,
    database,
    warehouse,
    role: live("ROLE"),
    ...(privateKey ? { privateKey } : { password }),
  };
}

async function openLiveWorld(credentials: WarehouseCredentials): Promise<SourceWorld> {
  const schema = `VECSYNC_CONTRACT_${crypto.randomUUID().replaceAll("-", "").slice(0, 12).toUpperCase()}`;
  const options = { url: live("URL") ?? null, pollMs: 1000 };
  const admin = new WarehouseSource(credentials, options);
  await admin.run(`CREATE SCHEMA "${schema}"`, [], "create schema");
  await admin.run(`USE SCHEMA "${schema}"`, [], "use schema");
  const connector = new WarehouseSource({ ...credentials, schema }, options);
  return {
    connector,
    async exec(script) {
      for (const statement of splitStatements(script)) await admin.run(statement, [], "exec");
    },
    types: { key: "NUMBER(38,0)", text: "VARCHAR", int: "INTEGER", bool: "BOOLEAN" },
    identifier: (name) => name.toUpperCase(),
    async [Symbol.asyncDispose]() {
      await connector.close();
      await admin.run(`DROP SCHEMA IF EXISTS "${schema}"`, [], "drop schema");
      await admin.close();
    },
  };
}

const credentials = liveCredentials();
if (credentials) sourceContract("warehouse (live)", () => openLiveWorld(credentials), ["cdc-per-commit", "cdc-teardown-loses-feed"]);
