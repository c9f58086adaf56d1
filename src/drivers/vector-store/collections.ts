// The collections and generations this process holds, in step with the registry tables
// (registry.ts): each collection's live generation and those building, opened at start-up, created,
// swapped and retired. Kept apart from store.ts, the API of rows and searches, because this is
// where the lifecycle rules live: loads run one generation at a time, a write or a swap waits for
// its generation's load, and a generation is dropped only once no search holds it (docs/vector-tables.md#query).
import type { Client } from "@libsql/client";
import { type GenerationSpec, VectorStoreError } from "../store-api/index.ts";
import type { Generation, StoreLog } from "./generation.ts";
import { ensureKeywordIndex } from "./keyword-index.ts";
import * as registry from "./registry.ts";
import { assertCollectionName } from "./schema.ts";
import type { WriteTarget } from "./types.ts";

export interface Collection {
  live: Generation;
  building: Map<number, Generation>;
}

/** Makes the in-process generation for a registry row (the store supplies its index settings). */
export type NewGeneration = (collection: string, generation: number, spec: GenerationSpec) => Generation;

export class Collections {
  private readonly byName = new Map<string, Collection>();
  /** Each opened generation's load; a write, swap, checkpoint or stats call waits for it. */
  private readonly loads = new Map<Generation, Promise<void>>();
  private closed = false;

  constructor(
    private readonly client: Client,
    private readonly newGeneration: NewGeneration,
    private readonly log: StoreLog,
  ) {}

  /** Reads the registry: retired generations are dropped, the others load in the background (searchable at once, through SQL). */
  async open(): Promise<void> {
    await registry.ensureRegistry(this.client);
    const records = await registry.listGenerations(this.client);
    let chain = Promise.resolve();
    for (const rec of records) {
      if (rec.state === "retired") {
        await registry.deleteGeneration(this.client, rec.collection, rec.generation);
        this.newGeneration(rec.collection, rec.generation, rec.spec).removeFiles();
        continue;
      }
      // Generations from before the keyword index get theirs built from their texts (keyword-index.ts).
      if (await ensureKeywordIndex(this.client, rec.collection, rec.generation)) {
        this.log("vector_store.keyword_index_built", { collection: rec.collection, generation: rec.generation });
      }
      const gen = this.newGeneration(rec.collection, rec.generation, rec.spec);
      const coll = this.byName.get(rec.collection) ?? { live: gen, building: new Map() };
      if (rec.state === "live") coll.live = gen;
      else coll.building.set(rec.generation, gen);
      this.byName.set(rec.collection, coll);
      // One generation at a time: loads read whole tables and would only compete.
      chain = chain.then(() => this.startLoad(gen));
      this.loads.set(gen, chain);
    }
  }

  /** Loads a generation; resolves once searchable from memory, then rebuilds if it must. */
  private async startLoad(gen: Generation): Promise<void> {
    try {
      const { rebuild } = await gen.load(this.client);
      rebuild?.catch((e) => this.log("vector_store.rebuild_failed", { collection: gen.collection, error: String(e) }));
    } catch (e) {
      this.log("vector_store.load_failed", { collection: gen.collection, generation: gen.generation, error: String(e) });
    }
  }

  /** Resolves once the generation's load is done (its index may still be rebuilding). */
  async loaded(gen: Generation): Promise<void> {
    await this.loads.get(gen);
  }

  get(name: string): Collection {
    if (this.closed) throw new VectorStoreError("closed", "the vector store is closed");
    const coll = this.byName.get(name);
    if (!coll) throw new VectorStoreError("collection_not_found", `no collection ${name}`);
    return coll;
  }

  /** The generation a write goes to, once loaded: the live one unless a building one is named. */
  async writable(name: string, target?: WriteTarget): Promise<Generation> {
    const coll = this.get(name);
    const gen = target?.generation === undefined || target.generation === coll.live.generation ? coll.live : coll.building.get(target.generation);
    if (!gen) throw new VectorStoreError("generation_not_found", `collection ${name} has no building generation ${target?.generation}`);
    await this.loads.get(gen);
    return gen;
  }

  names(): string[] {
    return [...this.byName.keys()];
  }

  has(name: string): boolean {
    return this.byName.has(name);
  }

  /** Each collection's live generation (also once closed: /readyz asks). */
  liveGenerations(): Generation[] {
    return [...this.byName.values()].map((coll) => coll.live);
  }

  /** Every generation held, live and building, of every collection. */
  all(): Generation[] {
    return [...this.byName.values()].flatMap((coll) => [coll.live, ...coll.building.values()]);
  }

  async create(name: string, spec: GenerationSpec): Promise<void> {
    assertCollectionName(name);
    if (this.byName.has(name)) throw new VectorStoreError("collection_exists", `collection ${name} exists`);
    await registry.insertCollection(this.client, name, spec);
    const gen = this.newGeneration(name, 1, spec);
    gen.markEmptyReady();
    this.byName.set(name, { live: gen, building: new Map() });
  }

  async drop(name: string): Promise<void> {
    const coll = this.get(name);
    this.byName.delete(name);
    const gens = [coll.live, ...coll.building.values()];
    await Promise.all(gens.map((g) => g.pins.drained()));
    // A checkpoint under way ends first (its last steps run outside the lock: checkpoints.ts).
    await Promise.all(gens.map((g) => g.checkpoints.between(async () => g.close())));
    await registry.deleteCollection(this.client, name);
    for (const g of gens) g.removeFiles();
  }

  /** Starts an empty generation (a re-backfill fills it with `{ generation }` writes). */
  async createGeneration(name: string, spec: GenerationSpec): Promise<number> {
    const coll = this.get(name);
    const number = await registry.insertBuildingGeneration(this.client, name, spec);
    const gen = this.newGeneration(name, number, spec);
    gen.markEmptyReady();
    coll.building.set(number, gen);
    return number;
  }

  /**
   * Makes a building generation live in one transaction. A search holds the generation it
   * started with, so it sees one or the other, never a mix; the old one is dropped once drained.
   */
  async swapGeneration(name: string, generation: number): Promise<void> {
    const coll = this.get(name);
    const next = coll.building.get(generation);
    if (!next) throw new VectorStoreError("generation_not_found", `collection ${name} has no building generation ${generation}`);
    await this.loads.get(next);
    const old = coll.live;
    await registry.swapLive(this.client, name, old.generation, generation);
    coll.live = next;
    coll.building.delete(generation);
    await this.retire(old);
  }

  /** Abandons a building generation. */
  async dropGeneration(name: string, generation: number): Promise<void> {
    const coll = this.get(name);
    const gen = coll.building.get(generation);
    if (!gen) throw new VectorStoreError("generation_not_found", `collection ${name} has no building generation ${generation}`);
    coll.building.delete(generation);
    await this.retire(gen);
  }

  private async retire(gen: Generation): Promise<void> {
    await gen.pins.drained();
    await gen.checkpoints.between(() =>
      gen.lock.run(async () => {
        gen.close();
        await registry.deleteGeneration(this.client, gen.collection, gen.generation);
        gen.removeFiles();
      }),
    );
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Refuses further calls; background rebuilds stop. */
  close(): void {
    this.closed = true;
    for (const g of this.all()) g.close();
  }
}
