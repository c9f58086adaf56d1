// Test world for the vector store: a fresh data dir with its own libSQL file per call,
// deterministic vectors, and a brute-force reference for exact answers.
import { mulberry32 } from "../../../src/shared/prng.ts";
import { createClient, type Client } from "@libsql/client";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { VectorStore, type VectorStoreOptions } from "../../../src/drivers/vector-store/index.ts";
import type { GenerationSpec, Metadata, SearchHit, UpsertRow } from "../../../src/drivers/store-api/index.ts";

export interface World {
  dir: string;
  dbUrl: string;
  indexDir: string;
  client: Client;
  open(opts?: Partial<VectorStoreOptions>): Promise<VectorStore>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** `defaults`: store options every `open` of this world starts from (e.g. a compact mirror). */
export async function makeWorld(defaults: Partial<VectorStoreOptions> = {}): Promise<World> {
  const dir = mkdtempSync(join(tmpdir(), "vecsync-vs-"));
  const dbUrl = `file:${join(dir, "vecsync.db")}`;
  const client = createClient({ url: dbUrl });
  await client.execute("PRAGMA journal_mode = WAL");
  const stores: VectorStore[] = [];
  const indexDir = join(dir, "indexes");
  return {
    dir,
    dbUrl,
    indexDir,
    client,
    async open(opts = {}) {
      // No background calibration unless a test asks: the paths tests assert stay deterministic.
      const store = await VectorStore.open({ client, indexDir, autoCalibrate: false, ...defaults, ...opts });
      stores.push(store);
      return store;
    },
    async [Symbol.asyncDispose]() {
      for (const s of stores) await s.close().catch(() => {});
      client.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Mulberry32: small, fast, deterministic. */
export const rng = mulberry32;

/** Clustered unit vectors: `clusters` random centres plus noise, like real embeddings. */
export function clusteredVectors(n: number, dims: number, seed: number, clusters = 8): Float32Array[] {
  const rand = rng(seed);
  const centres = Array.from({ length: clusters }, () => Float32Array.from({ length: dims }, () => rand() * 2 - 1));
  return Array.from({ length: n }, () => {
    const c = centres[Math.floor(rand() * clusters)]!;
    const v = Float32Array.from(c, (x) => x + (rand() * 2 - 1) * 0.6);
    const norm = Math.hypot(...v);
    return v.map((x) => x / norm);
  });
}

export const SPEC: GenerationSpec = {
  dimensions: 16,
  numericPk: true,
  metadata: [
    { name: "category", type: "keyword" },
    { name: "price", type: "float" },
    { name: "stock", type: "integer" },
    { name: "active", type: "boolean" },
  ],
};

export function productRows(n: number, dims: number, seed = 1, offset = 0): UpsertRow[] {
  const vectors = clusteredVectors(n, dims, seed);
  const rand = rng(seed + 1000);
  return vectors.map((vector, i) => {
    const id = i + offset;
    const metadata: Metadata = {
      category: id % 7 === 0 ? null : ["books", "games", "tools"][id % 3]!,
      price: id % 11 === 0 ? null : Math.round(rand() * 10000) / 100,
      stock: id % 13 === 0 ? null : id % 50,
      active: id % 5 === 0 ? null : id % 2 === 0,
    };
    return { pk: String(id), textHash: `t${id}`, metaHash: `m${id}`, text: `product ${id}`, metadata, vector };
  });
}

export function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return dot / Math.sqrt(na * nb);
}

/** Brute-force top-k pks over rows passing `keep`, ties by numeric pk. */
export function referenceTopK(rows: UpsertRow[], query: Float32Array, k: number, keep: (m: Metadata) => boolean = () => true): string[] {
  return rows
    .filter((r) => keep(r.metadata))
    .map((r) => ({ pk: r.pk, score: cosine(r.vector, query) }))
    .sort((a, b) => b.score - a.score || Number(a.pk) - Number(b.pk))
    .slice(0, k)
    .map((r) => r.pk);
}

export function pks(hits: SearchHit[]): string[] {
  return hits.map((h) => h.pk);
}

export function overlap(a: string[], b: string[]): number {
  const set = new Set(b);
  return a.filter((x) => set.has(x)).length / Math.max(1, b.length);
}

/** Counts the event loop's turns from now until `stop()`, which answers the count. */
export function loopTurns(): { stop(): number } {
  let turns = 0;
  let running = true;
  const spin = () => {
    turns++;
    if (running) setImmediate(spin);
  };
  setImmediate(spin);
  return {
    stop: () => {
      running = false;
      return turns;
    },
  };
}
