// The store contract (contract.ts) against the managed store and the pgvector store: the sync
// engine and the query service drive both through the same TableStore. The warehouse store joins
// with a subject of its own.
import { setDefaultTimeout } from "bun:test";
import { platformVectorRef } from "../../../src/drivers/platform/pgvector-schema.ts";
import { newId } from "../../../src/shared/ids.ts";
import { managedTableStore, platformTableStore } from "../../../src/domains/vector-tables/storage.ts";
import { makeWorld } from "../vector-store/helpers.ts";
import { storeContract } from "./contract.ts";
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
