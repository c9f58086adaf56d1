// The managed vector store: the API the services use. One libSQL client (the source of truth)
// and one directory of index checkpoints. See docs/architecture.md#stores and issue 6. Which
// collections and generations exist, and their lifecycle, is collections.ts; this file is the
// rows and searches on them.
import type { Client } from "@libsql/client";
import { graphAddon } from "./graph-binding.ts";
import { Foreground } from "../../shared/foreground.ts";
import { Collections } from "./collections.ts";
import { compileSql, type GenerationSpec, type Metadata, type MetadataUpdate, type MetadataValue, parseFilter, type RowHashes, type SearchRequest, type StoredDoc, type UpsertRow, VectorStoreError } from "../store-api/index.ts";
import { Generation, type StoreLog } from "./generation.ts";
import { DEFAULT_FLOAT_MIRROR_BYTES, DEFAULT_INDEX_PARAMS, type VectorStoreOptions } from "./options.ts";
import { type Pacing, realClock } from "./pace.ts";
import type { Calibration } from "./planner.ts";
import { countMatching, readDocs, readHashes } from "./reads.ts";
import { deleteStatements, runWrite, updateMetadataStatements, upsertStatements } from "./rows.ts";
import { searchWithMode } from "./query-modes.ts";
import { searchGeneration } from "./search.ts";
import { collectStats } from "./stats.ts";
import type { CollectionStats, CollectionStatus, IndexParams, PinnedGeneration, SearchResult, WriteTarget } from "./types.ts";

export class VectorStore {
  private readonly collections: Collections;

  private constructor(
    private readonly client: Client,
    indexDir: string,
    params: Partial<IndexParams> | undefined,
    private readonly log: StoreLog,
    private readonly tuning: { exactCapScale?: number; floatMirrorBytes: number; autoCalibrate: boolean; orderQuietMs?: number },
    private readonly pacing: Pacing,
  ) {
    const indexParams = { ...DEFAULT_INDEX_PARAMS, ...params };
    const memory = { floatBytes: tuning.floatMirrorBytes, orderQuietMs: tuning.orderQuietMs };
    const newGeneration = (collection: string, generation: number, spec: GenerationSpec) =>
      new Generation(collection, generation, spec, indexParams, indexDir, log, { memory, pacing });
    this.collections = new Collections(client, newGeneration, log);
  }

  /** Opens the store; collections load in the background (searchable at once, through SQL). */
  static async open(opts: VectorStoreOptions): Promise<VectorStore> {
    graphAddon(); // every graph runs on it: without it the store does not open, and says why
    const store = new VectorStore(opts.client, opts.indexDir, opts.index, opts.log ?? (() => {}), {
      exactCapScale: opts.exactCapScale,
      floatMirrorBytes: opts.floatMirrorBytes ?? DEFAULT_FLOAT_MIRROR_BYTES,
      autoCalibrate: opts.autoCalibrate ?? true,
      orderQuietMs: opts.orderQuietMs,
    }, { clock: opts.clock ?? realClock, foreground: opts.foreground ?? new Foreground() });
    await store.collections.open();
    return store;
  }

  /** The foreground this store's background work gives way to: the service's too. */
  get foreground(): Foreground {
    return this.pacing.foreground;
  }

  private live(name: string): Generation {
    return this.collections.get(name).live;
  }

  private writable(name: string, target?: WriteTarget): Promise<Generation> {
    return this.collections.writable(name, target);
  }

  createCollection(name: string, spec: GenerationSpec): Promise<void> {
    return this.collections.create(name, spec);
  }

  dropCollection(name: string): Promise<void> {
    return this.collections.drop(name);
  }

  listCollections(): string[] {
    return this.collections.names().sort();
  }

  hasCollection(name: string): boolean {
    return this.collections.has(name);
  }

  /** Inserts or replaces rows (by pk) in one transaction; the index follows once it commits. */
  async upsert(name: string, rows: UpsertRow[], target?: WriteTarget): Promise<void> {
    const gen = await this.writable(name, target);
    if (rows.length === 0) return;
    await gen.checkpoints.withinReplayBound();
    const statements = upsertStatements(gen, rows); // validates before any write
    const typed = rows.map((r) => typedMetadata(gen.spec, r.metadata));
    if (target?.indexLater) await gen.indexCaughtUp(target.streaming ?? false);
    else await gen.graphFree();
    await gen.lock.run(async () => {
      const { seq, results } = await runWrite(this.client, statements);
      const ridRows = results[results.length - 2]!.rows;
      gen.applyUpsert(rows, new Map(ridRows.map((r) => [String(r.pk), Number(r.rid)])), typed, seq, target?.indexLater);
      await gen.committed(this.client, seq);
    });
    gen.upkeep.afterWrite(this.client);
  }

  /** Deletes rows by pk; returns how many existed. */
  async delete(name: string, pks: string[], target?: WriteTarget): Promise<number> {
    const gen = await this.writable(name, target);
    if (pks.length === 0) return 0;
    await gen.checkpoints.withinReplayBound();
    const deleted = await gen.lock.run(async () => {
      const { seq, results } = await runWrite(this.client, deleteStatements(gen, pks));
      const rids = results[results.length - 2]!.rows.map((r) => Number(r.rid)); // the DELETE … RETURNING, before the sequence read
      gen.applyDelete(rids);
      await gen.committed(this.client, seq);
      return rids.length;
    });
    gen.upkeep.afterWrite(this.client);
    return deleted;
  }

  /** Changes metadata (and its hash) without touching text or vector; returns rows updated. */
  async updateMetadata(name: string, updates: MetadataUpdate[], target?: WriteTarget): Promise<number> {
    const gen = await this.writable(name, target);
    if (updates.length === 0) return 0;
    await gen.checkpoints.withinReplayBound();
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
    const gen = this.live(name);
    gen.pins.hold();
    let held = true;
    return {
      generation: gen.generation,
      spec: gen.spec,
      search: async (req) => {
        if (!held) throw new VectorStoreError("closed", `the pin on ${name} was released`);
        const node = parseFilter(req.filter, gen.spec.metadata);
        const result = req.mode === undefined ? await searchGeneration(this.client, gen, req, node, this.tuning.exactCapScale) : await searchWithMode(this.client, gen, req, node, this.tuning.exactCapScale);
        // An explained search reports the measured recall (explain.ts), so it starts the measurement too.
        if ((node || req.explain) && this.tuning.autoCalibrate) gen.calibrator.ifStale();
        return result;
      },
      release: () => {
        if (held) gen.pins.release();
        held = false;
      },
    };
  }

  /** Measures the live generation's filtered-search depth now (calibration.ts); returns the bands. */
  async calibrate(name: string): Promise<Calibration | null> {
    const gen = this.live(name);
    await this.whenReady(name);
    await gen.calibrator.now();
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
    const names = name === undefined ? this.collections.names() : [name];
    for (const n of names) {
      const coll = this.collections.get(n);
      for (const gen of [coll.live, ...coll.building.values()]) {
        await this.collections.loaded(gen);
        await gen.upkeep.settled();
        await gen.checkpoints.run(this.client);
      }
    }
  }

  /** Applies changes another process committed to the same database (shared libSQL server). */
  async refresh(name: string): Promise<void> {
    const gen = await this.writable(name);
    await gen.lock.run(() => gen.catchUp(this.client));
  }

  /** Starts an empty generation (a re-backfill fills it with `{ generation }` writes). */
  createGeneration(name: string, spec: GenerationSpec): Promise<number> {
    return this.collections.createGeneration(name, spec);
  }

  /** Makes a building generation live in one transaction; searches see the old or the new, never a mix (collections.ts). */
  swapGeneration(name: string, generation: number): Promise<void> {
    return this.collections.swapGeneration(name, generation);
  }

  /** Abandons a building generation. */
  dropGeneration(name: string, generation: number): Promise<void> {
    return this.collections.dropGeneration(name, generation);
  }

  generations(name: string): { live: number; building: number[] } {
    const coll = this.collections.get(name);
    return { live: coll.live.generation, building: [...coll.building.keys()].sort((a, b) => a - b) };
  }

  status(name: string): CollectionStatus {
    return this.live(name).status;
  }

  /** For /readyz: every live generation's index is complete. */
  ready(): boolean {
    return this.collections.liveGenerations().every((gen) => gen.status === "ready");
  }

  /** Resolves when the collection's live generation is fully loaded and indexed. */
  async whenReady(name: string, timeoutMs = 600_000): Promise<void> {
    let cancel = () => {};
    const late = new Promise<never>((_, reject) => (cancel = this.pacing.clock.setTimer(() => reject(new Error(`collection ${name} not ready after ${timeoutMs} ms`)), timeoutMs)));
    late.catch(() => {});
    try {
      // The live generation may change meanwhile (a swap): wait on whichever is live.
      for (let gen = this.live(name); gen.state !== "ready"; gen = this.live(name)) {
        if (gen.closed) throw new VectorStoreError("closed", "the vector store is closed");
        await Promise.race([gen.reached("ready"), late]);
      }
    } finally {
      cancel();
    }
    // …and its background upkeep (the stray sweep after a load, a checkpoint under way) is done.
    await this.live(name).upkeep.swept();
  }

  /**
   * Makes the live generation's keyword ranking in memory now (a search by words would start it,
   * FTS5 answering meanwhile) and resolves once it is whole: true, or false when this generation
   * ranks in FTS5 (still loading, compact, texts not kept).
   */
  async keywordReady(name: string): Promise<boolean> {
    const gen = this.live(name);
    await this.collections.loaded(gen);
    const mirror = gen.mirror;
    if (mirror.keywordPostings()) return true;
    await mirror.filled;
    return mirror.keywordPostings() !== null;
  }

  async stats(name: string): Promise<CollectionStats> {
    const gen = this.live(name);
    await this.collections.loaded(gen);
    return collectStats(this.client, gen);
  }

  /** Checkpoints every index, then refuses further calls. Background rebuilds stop. */
  async close(): Promise<void> {
    if (this.collections.isClosed) return;
    await this.checkpoint().catch((e) => this.log("vector_store.checkpoint_failed", { error: String(e) }));
    this.collections.close();
  }
}

/** Metadata as the mirror holds it: typed per column, missing → null, NaN → null (as SQLite stores it). */
function typedMetadata(spec: GenerationSpec, metadata: Metadata): MetadataValue[] {
  return spec.metadata.map((c) => {
    const v = metadata[c.name] ?? null;
    return typeof v === "number" && Number.isNaN(v) ? null : v;
  });
}
