// The native files embedded in a compiled binary. Under `bun run` this stays `null` and every
// package loads its addon from node_modules as usual; `scripts/build` replaces this module's
// contents with the real list (see scripts/build/native-plugin.ts), so the source never changes.

export type NativeEngine = "libsql" | "usearch" | "graph" | "duckdb";

export type EmbeddedFile = {
  /** File name on disk; files of one engine land side by side (DuckDB's addon needs `$ORIGIN`). */
  name: string;
  /** Where the binary holds it (`/$bunfs/root/…`), readable with node:fs. */
  path: string;
  sizeBytes: number;
};

export type EmbeddedEngine = {
  /** Version of the npm package the files came from. */
  version: string;
  /** sha256 (hex, shortened) over the names and contents: names the cache directory. */
  hash: string;
  /** The N-API addon that is loaded; the other files sit beside it. */
  main: string;
  files: EmbeddedFile[];
};

export type EmbeddedNatives = { target: string; engines: Record<NativeEngine, EmbeddedEngine> };

export const embedded: EmbeddedNatives | null = null;
