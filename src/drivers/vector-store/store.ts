// The managed vector store: the API the services use. One libSQL client (the source of truth)
// and one directory of index checkpoints. See docs/architecture.md#stores and issue 6. Which
// collections and generations exist, and their lifecycle, is collections.ts; this file is the
// rows and searches on them.
import type { Client } from "@libsql/client";
import { graphAddon } from "../../native/usearch.ts";
import { Collections } from "./collections.ts";
import { VectorStoreError } from "./errors.ts";
import { compileSql, parseFilter } from "./filters/index.ts";
import { Generation, type StoreLog } from "./generation.ts";
import type { Calibration } from "./planner.ts";
import { countMatching, readDocs, readHashes } from "./reads.ts";
import { deleteStatements, runWrite, updateMetadataStatements, upsertStatements } from "./rows.ts";
import { searchWithMode } from "./query-modes.ts";
import { searchGeneration } from "./search.ts";
import { collectStats } from "./stats.ts";
import type { CollectionStats, CollectionStatus, GenerationSpec, IndexParams, MetadataUpdate, Metadata, MetadataValue, PinnedGeneration, RowHashes, SearchRequest, SearchResult, StoredDoc, UpsertRow, WriteTarget } from "./types.ts";

/**
 * Defaults from `bun run bench query` (clustered data). The index is i8: it only has to find
 * candidates, which are re-scored in f32 from the mirror, and against f16 it searches 1.5× faster
 * (100k × 384: 0.12 against 0.17 ms at ef 64, both recall@10 0.998 re-scored; 1M × 768: ef 384
 * in 0.74 ms at 0.992, where f16 took 1.35 ms for 0.88 at ef 64), builds twice as fast and
 * takes a quarter of f32's memory. M=16 and ef=64 at 100k rows (scaled with size, planner.ts);
 * ef_construction 128 buys recall for a one-off build cost.
 */
export const DEFAULT_INDEX_PARAMS: IndexParams = { connectivity: 16, expansionAdd: 128, expansionSearch: 64, threads: 2 };

/**
 * 512 MiB of f32 vectors per collection: 350k rows at 384 dims, 175k at 768. Below it searches
 * need no SQL read; above it a collection takes a quarter of the memory for its vectors (docs/performance.md
 * "1M × 768") and each search reads ~2k rows back from libSQL.
 */
export const DEFAULT_FLOAT_MIRROR_BYTES = 512 * 2 ** 20;

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
   * A collection keeps its f32 vectors in memory while they take at most this many bytes (live
   * rows × dims × 4; default DEFAULT_FLOAT_MIRROR_BYTES). Past it the collection turns compact
   * (mirror.ts): i8 codes only, no texts, and each search reads its final candidates' f32
   * vectors and texts from libSQL (refine.ts). 0: every collection compact from the start.
   */
  floatMirrorBytes?: number;
  /**
   * Measure filtered-search depth on each collection's own data (calibration.ts) in the
   * background after a filtered search finds the measurement missing or stale (default true).
   */
  autoCalibrate?: boolean;
  /** How long writes must have paused before a range filter's block is made again (range-blocks.ts; default RANGE_QUIET_MS). */
  rangeQuietMs?: number;
}

export class VectorStore {
  private readonly collections: Collections;

  private constructor(
    private readonly client: Client,
    indexDir: string,
    params: Partial<IndexParams> | undefined,
    private readonly log: StoreLog,
    private readonly tuning: { exactCapScale?: number; floatMirrorBytes: number; autoCalibrate: boolean; rangeQuietMs?: number },
  ) {
    const indexParams = { ...DEFAULT_INDEX_PARAMS, ...params };
    const memory = { floatBytes: tuning.floatMirrorBytes, rangeQuietMs: tuning.rangeQuietMs };
    const newGeneration = (collection: string, generation: number, spec: GenerationSpec) =>
      new Generation(collection, generation, spec, indexParams, indexDir, log, memory);
    this.collections = new Collections(client, newGeneration, log);
  }

  /** Opens the store; collections load in the background (searchable at once, through SQL). */
  static async open(opts: VectorStoreOptions): Promise<VectorStore> {
    graphAddon(); // every graph runs on it: without it the store does not open, and says why
    const store = new VectorStore(opts.client, opts.indexDir, opts.index, opts.log ?? (() => {}), {
      exactCapScale: opts.exactCapScale,
      floatMirrorBytes: opts.floatMirrorBytes ?? DEFAULT_FLOAT_MIRROR_BYTES,
      autoCalibrate: opts.autoCalibrate ?? true,
      rangeQuietMs: opts.rangeQuietMs,
    });
    await store.collections.open();
    return store;
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
    gen.afterWrite(this.client);
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
    gen.afterWrite(this.client);
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
        if ((node || req.explain) && this.tuning.autoCalibrate) gen.calibrateIfStale();
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
    const names = name === undefined ? this.collections.names() : [name];
    for (const n of names) {
      const coll = this.collections.get(n);
      for (const gen of [coll.live, ...coll.building.values()]) {
        await this.collections.loaded(gen);
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
    const deadline = Date.now() + timeoutMs;
    while (this.status(name) !== "ready") {
      if (Date.now() > deadline) throw new Error(`collection ${name} not ready after ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    // …and its background upkeep (the stray sweep after a load, a checkpoint under way) is done.
    await this.live(name).swept();
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
