// The managed vector store: the API the services use. One libSQL client (the source of truth)
// and one directory of index checkpoints. See ARCHITECTURE "Stores" and issue 6.
import type { Client } from "@libsql/client";
import type { Calibration } from "./planner.ts";
import { VectorStoreError } from "./errors.ts";
import { parseFilter } from "./filters/index.ts";
import { Generation, type StoreLog } from "./generation.ts";
import { countMatching, readDocs, readHashes } from "./reads.ts";
import * as registry from "./registry.ts";
import { deleteStatements, runWrite, updateMetadataStatements, upsertStatements } from "./rows.ts";
import { assertCollectionName } from "./schema.ts";
import { searchGeneration } from "./search.ts";
import { collectStats } from "./stats.ts";
import type { CollectionStats, CollectionStatus, GenerationSpec, IndexParams, MetadataUpdate, Metadata, MetadataValue, PinnedGeneration, RowHashes, SearchRequest, SearchResult, StoredDoc, UpsertRow } from "./types.ts";
import { compileSql } from "./filters/index.ts";

/**
 * Defaults from `bun run bench query` (clustered data): the index only has to find candidates,
 * which are re-scored in f32 from the mirror, so i8 serves: against f16 it searches 1.5× faster
 * (100k × 384: 0.12 against 0.17 ms at ef 64, both recall@10 0.998 re-scored; 1M × 768: ef 384
 * in 0.74 ms at 0.992, where f16 took 1.35 ms for 0.88 at ef 64), builds twice as fast and
 * takes a quarter of f32's memory. M=16 and ef=64 at 100k rows (scaled with size, planner.ts);
 * ef_construction 128 buys recall for a one-off build cost.
 */
export const DEFAULT_INDEX_PARAMS: IndexParams = { scalar: "i8", connectivity: 16, expansionAdd: 128, expansionSearch: 64, threads: 2 };

export interface VectorStoreOptions {
  /** Created by the caller (`createClient({ url })`); local files should be in WAL mode. */
  client: Client;
  /** Where index checkpoints live, e.g. `<data-dir>/indexes`. */
  indexDir: string;
  index?: Partial<IndexParams>;
  log?: StoreLog;
  /** Scales the planner's exact-path match cap (planner.ts); tests lower it to reach HNSW on small data. */
  exactCapScale?: number;
  /**
   * Keep each row's embedded text in memory beside its vector (default true): hits then need no
   * SQL read, ~0.1 ms less per search on a cold page cache. Costs the texts' size (~2 B/char
   * counted) per row; turn off for very long texts, and hits read their text from libSQL.
   */
  keepTexts?: boolean;
  /**
   * Measure filtered-search depth on each collection's own data (calibration.ts) in the
   * background after a filtered search finds the measurement missing or stale (default true).
   */
  autoCalibrate?: boolean;
}

interface Collection {
  live: Generation;
  building: Map<number, Generation>;
}

/** Which generation a write goes to: the live one unless a building generation is named. */
export interface WriteTarget {
  generation?: number;
}

export class VectorStore {
  private readonly collections = new Map<string, Collection>();
  private readonly loads = new Map<Generation, Promise<void>>();
  private readonly params: IndexParams;
  private closed = false;

  private constructor(
    private readonly client: Client,
    private readonly indexDir: string,
    params: Partial<IndexParams> | undefined,
    private readonly log: StoreLog,
    private readonly tuning: { exactCapScale?: number; keepTexts: boolean; autoCalibrate: boolean },
  ) {
    this.params = { ...DEFAULT_INDEX_PARAMS, ...params };
  }

  /** Opens the store; collections load in the background (searchable at once, through SQL). */
  static async open(opts: VectorStoreOptions): Promise<VectorStore> {
    const store = new VectorStore(opts.client, opts.indexDir, opts.index, opts.log ?? (() => {}), {
      exactCapScale: opts.exactCapScale,
      keepTexts: opts.keepTexts ?? true,
      autoCalibrate: opts.autoCalibrate ?? true,
    });
    await registry.ensureRegistry(opts.client);
    const records = await registry.listGenerations(opts.client);
    let chain = Promise.resolve();
    for (const rec of records) {
      if (rec.state === "retired") {
        await registry.deleteGeneration(opts.client, rec.collection, rec.generation);
        store.newGeneration(rec.collection, rec.generation, rec.spec).removeFiles();
        continue;
      }
      const gen = store.newGeneration(rec.collection, rec.generation, rec.spec);
      const coll = store.collections.get(rec.collection) ?? { live: gen, building: new Map() };
      if (rec.state === "live") coll.live = gen;
      else coll.building.set(rec.generation, gen);
      store.collections.set(rec.collection, coll);
      // One generation at a time: loads read whole tables and would only compete.
      chain = chain.then(() => store.startLoad(gen));
      store.loads.set(gen, chain);
    }
    return store;
  }

  private newGeneration(collection: string, generation: number, spec: GenerationSpec): Generation {
    return new Generation(collection, generation, spec, this.params, this.indexDir, this.log, this.tuning.keepTexts);
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

  private collection(name: string): Collection {
    if (this.closed) throw new VectorStoreError("closed", "the vector store is closed");
    const coll = this.collections.get(name);
    if (!coll) throw new VectorStoreError("collection_not_found", `no collection ${name}`);
    return coll;
  }

  private async writable(name: string, target?: WriteTarget): Promise<Generation> {
    const coll = this.collection(name);
    const gen = target?.generation === undefined || target.generation === coll.live.generation ? coll.live : coll.building.get(target.generation);
    if (!gen) throw new VectorStoreError("generation_not_found", `collection ${name} has no building generation ${target?.generation}`);
    await this.loads.get(gen);
    return gen;
  }

  async createCollection(name: string, spec: GenerationSpec): Promise<void> {
    assertCollectionName(name);
    if (this.collections.has(name)) throw new VectorStoreError("collection_exists", `collection ${name} exists`);
    await registry.insertCollection(this.client, name, spec);
    const gen = this.newGeneration(name, 1, spec);
    gen.markEmptyReady();
    this.collections.set(name, { live: gen, building: new Map() });
  }

  async dropCollection(name: string): Promise<void> {
    const coll = this.collection(name);
    this.collections.delete(name);
    const gens = [coll.live, ...coll.building.values()];
    await Promise.all(gens.map((g) => g.drained()));
    for (const g of gens) g.closed = true;
    await registry.deleteCollection(this.client, name);
    for (const g of gens) g.removeFiles();
  }

  listCollections(): string[] {
    return [...this.collections.keys()].sort();
  }

  hasCollection(name: string): boolean {
    return this.collections.has(name);
  }

  /** Inserts or replaces rows (by pk) in one transaction; the index follows once it commits. */
  async upsert(name: string, rows: UpsertRow[], target?: WriteTarget): Promise<void> {
    const gen = await this.writable(name, target);
    if (rows.length === 0) return;
    const statements = upsertStatements(gen, rows); // validates before any write
    const typed = rows.map((r) => typedMetadata(gen.spec, r.metadata));
    await gen.lock.run(async () => {
      const { seq, results } = await runWrite(this.client, statements);
      const ridRows = results[results.length - 2]!.rows;
      gen.applyUpsert(rows, new Map(ridRows.map((r) => [String(r.pk), Number(r.rid)])), typed, seq);
      await gen.committed(this.client, seq);
    });
    gen.afterWrite(this.client);
  }

  /** Deletes rows by pk; returns how many existed. */
  async delete(name: string, pks: string[], target?: WriteTarget): Promise<number> {
    const gen = await this.writable(name, target);
    if (pks.length === 0) return 0;
    const deleted = await gen.lock.run(async () => {
      const { seq, results } = await runWrite(this.client, deleteStatements(gen, pks));
      const rids = results[3]!.rows.map((r) => Number(r.rid));
      gen.applyDelete(rids);
      await gen.committed(this.client, seq);
      return rids.length;
    });
    gen.afterWrite(this.client);
    return deleted;
  }

  /** Changes metadata (and its hash) without touching text or vector; returns rows updated. */
  async updateMetadata(name: string, updates: MetadataUpdate[], target?: WriteTarget): Promise<number> {
    const gen = await this.writable(name, target);
    if (updates.length === 0) return 0;
    const statements = updateMetadataStatements(gen, updates);
    return gen.lock.run(async () => {
      const { seq, results } = await runWrite(this.client, statements);
      let updated = 0;
      updates.forEach((u, i) => {
        const rid = results[i + 1]!.rows[0]?.rid;
        if (rid === undefined || rid === null) return;
        gen.applyMetadata(Number(rid), typedMetadata(gen.spec, u.metadata));
        updated++;
      });
      await gen.committed(this.client, seq);
      return updated;
    });
  }

  /** Stored hashes for diffing: a page after `afterPk` in pk order, or exactly `pks`. */
  async hashes(name: string, opts: { afterPk?: string; limit?: number; pks?: string[] } & WriteTarget = {}): Promise<RowHashes[]> {
    return readHashes(this.client, await this.writable(name, opts), opts);
  }

  /** Stored text and vector of `pks` (a re-backfill copying unchanged rows, a hash that moved without the text). */
  async docs(name: string, pks: string[], target?: WriteTarget): Promise<Map<string, StoredDoc>> {
    return readDocs(this.client, await this.writable(name, target), pks);
  }

  /** Filtered top-k by cosine similarity on the live generation. Throws FilterError on a bad filter. */
  async search(name: string, req: SearchRequest): Promise<SearchResult> {
    const pinned = this.pin(name);
    try {
      return await pinned.search(req);
    } finally {
      pinned.release();
    }
  }

  /** Holds the live generation for a query that must embed and search against the same one. */
  pin(name: string): PinnedGeneration {
    const gen = this.collection(name).live;
    gen.pin();
    let held = true;
    return {
      generation: gen.generation,
      spec: gen.spec,
      search: async (req) => {
        if (!held) throw new VectorStoreError("closed", `the pin on ${name} was released`);
        const node = parseFilter(req.filter, gen.spec.metadata);
        const result = await searchGeneration(this.client, gen, req, node, this.tuning.exactCapScale);
        if (node && this.tuning.autoCalibrate) gen.calibrateIfStale();
        return result;
      },
      release: () => {
        if (held) gen.unpin();
        held = false;
      },
    };
  }

  /** Measures the live generation's filtered-search depth now (calibration.ts); returns the bands. */
  async calibrate(name: string): Promise<Calibration | null> {
    const gen = this.collection(name).live;
    await this.whenReady(name);
    await gen.calibrateNow();
    return gen.calibration;
  }

  async count(name: string, filter?: unknown, target?: WriteTarget): Promise<number> {
    const gen = await this.writable(name, target);
    const node = parseFilter(filter, gen.spec.metadata);
    if (!node && gen.status !== "loading") return gen.mirror.liveCount;
    return countMatching(this.client, gen, compileSql(node, gen.spec.metadata));
  }

  /** Saves every complete index that is behind libSQL (all collections when no name). */
  async checkpoint(name?: string): Promise<void> {
    const names = name === undefined ? [...this.collections.keys()] : [name];
    for (const n of names) {
      const coll = this.collection(n);
      for (const gen of [coll.live, ...coll.building.values()]) {
        await this.loads.get(gen);
        await gen.settled();
        await gen.checkpoint(this.client);
      }
    }
  }

  /** Applies changes another process committed to the same database (shared libSQL server). */
  async refresh(name: string): Promise<void> {
    const gen = await this.writable(name);
    await gen.lock.run(() => gen.catchUp(this.client));
  }

  /** Starts an empty generation (a re-backfill fills it with `{ generation }` writes). */
  async createGeneration(name: string, spec: GenerationSpec): Promise<number> {
    const coll = this.collection(name);
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
    const coll = this.collection(name);
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
    const coll = this.collection(name);
    const gen = coll.building.get(generation);
    if (!gen) throw new VectorStoreError("generation_not_found", `collection ${name} has no building generation ${generation}`);
    coll.building.delete(generation);
    await this.retire(gen);
  }

  private async retire(gen: Generation): Promise<void> {
    await gen.drained();
    await gen.lock.run(async () => {
      gen.closed = true;
      await registry.deleteGeneration(this.client, gen.collection, gen.generation);
      gen.removeFiles();
    });
  }

  generations(name: string): { live: number; building: number[] } {
    const coll = this.collection(name);
    return { live: coll.live.generation, building: [...coll.building.keys()].sort((a, b) => a - b) };
  }

  status(name: string): CollectionStatus {
    return this.collection(name).live.status;
  }

  /** For /readyz: every live generation's index is complete. */
  ready(): boolean {
    return [...this.collections.values()].every((c) => c.live.status === "ready");
  }

  /** Resolves when the collection's live generation is fully loaded and indexed. */
  async whenReady(name: string, timeoutMs = 600_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.status(name) !== "ready") {
      if (Date.now() > deadline) throw new Error(`collection ${name} not ready after ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    // …and its background upkeep (the stray sweep after a load, a checkpoint under way) is done.
    await this.collection(name).live.swept();
  }

  async stats(name: string): Promise<CollectionStats> {
    const gen = this.collection(name).live;
    await this.loads.get(gen);
    return collectStats(this.client, gen);
  }

  /** Checkpoints every index, then refuses further calls. Background rebuilds stop. */
  async close(): Promise<void> {
    if (this.closed) return;
    await this.checkpoint().catch((e) => this.log("vector_store.checkpoint_failed", { error: String(e) }));
    this.closed = true;
    for (const coll of this.collections.values()) for (const g of [coll.live, ...coll.building.values()]) g.closed = true;
  }
}

/** Metadata as the mirror holds it: typed per column, missing → null, NaN → null (as SQLite stores it). */
function typedMetadata(spec: GenerationSpec, metadata: Metadata): MetadataValue[] {
  return spec.metadata.map((c) => {
    const v = metadata[c.name] ?? null;
    return typeof v === "number" && Number.isNaN(v) ? null : v;
  });
}
