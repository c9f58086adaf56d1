// Test world for the warehouse platform store: the DuckDB-backed warehouse test server
// (test/fakes/warehouse), spoken to through the real snowflake-sdk, and a store connected the way
// the service connects to a warehouse source (credentials + VECSYNC_WAREHOUSE_URL).
import { connectWarehouseStore, warehouseVectorRef, type WarehouseVectorStore } from "../../../src/drivers/platform/warehouse.ts";
import { WarehouseSource, type WarehouseCredentials } from "../../../src/drivers/sources/warehouse.ts";
import { startFakeWarehouse, type FakeWarehouse, type FakeWarehouseOptions } from "../../fakes/warehouse/server.ts";

export interface WarehouseWorld {
  fake: FakeWarehouse;
  store: WarehouseVectorStore;
  credentials: WarehouseCredentials;
  /** A ref in the fake's database: `<DB>.VECSYNC.VT_<ID8>_<NAME>`. */
  ref(id: string, name: string): string;
  /** A source driver on the same account, for the built-in embedding tests. */
  source(): WarehouseSource;
  [Symbol.asyncDispose](): Promise<void>;
}

export async function warehouseWorld(options: FakeWarehouseOptions = {}, user = { user: "tester", password: "secret" }): Promise<WarehouseWorld> {
  const fake = await startFakeWarehouse(options);
  const credentials: WarehouseCredentials = { authMethod: "password", account: fake.account, user: user.user, password: user.password, database: fake.database };
  const store = connectWarehouseStore(credentials, { url: fake.url });
  const sources: WarehouseSource[] = [];
  return {
    fake,
    store,
    credentials,
    ref: (id, name) => warehouseVectorRef(fake.database, id, name),
    source() {
      const source = new WarehouseSource(credentials, { url: fake.url });
      sources.push(source);
      return source;
    },
    async [Symbol.asyncDispose]() {
      for (const s of sources) await s.close();
      await store.close();
      await fake.close();
    },
  };
}
