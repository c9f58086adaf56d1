// The store contract (contract.ts) against the managed store, the pgvector store and the warehouse
// store: the sync engine and the query service drive all three through the same TableStore.
import { setDefaultTimeout } from "bun:test";
import { platformVectorRef } from "../../../src/drivers/platform/pgvector-schema.ts";
import { newId } from "../../../src/shared/ids.ts";
import { managedTableStore, platformTableStore } from "../../../src/domains/vector-tables/storage.ts";
import { makeWorld } from "../vector-store/helpers.ts";
import { storeContract } from "./contract.ts";
import { warehouseWorld } from "./warehouse-world.ts";
import { platformWorld } from "./world.ts";

// Starts databases: slower than bun's 5 s default on a loaded 2-core machine.
setDefaultTimeout(30_000);

storeContract("managed", async () => {
  const world = await makeWorld();
  const vectors = await world.open();
  return {
    make: async () => managedTableStore(vectors, `vt_${newId().slice(0, 8)}_contract`),
    key: { name: "id", type: "bigint" },
    dispose: () => world[Symbol.asyncDispose](),
  };
});

storeContract("pgvector", async () => {
  const world = await platformWorld();
  return {
    make: async () => platformTableStore(world.store, platformVectorRef(newId(), "contract")),
    key: { name: "id", type: "bigint" },
    dispose: () => world[Symbol.asyncDispose](),
  };
});

storeContract("warehouse", async () => {
  const world = await warehouseWorld();
  return {
    make: async () => platformTableStore(world.store, world.ref(newId(), "contract")),
    // What `keyColumn` reads for a source's NUMBER(38,0) key: kept as the table's key type.
    key: { name: "ID", type: "NUMBER(38,0)" },
    dispose: () => world[Symbol.asyncDispose](),
  };
});
