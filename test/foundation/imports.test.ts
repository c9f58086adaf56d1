// The source tree's shape (STYLE "Rules of the house"): no import circle crosses folders, and no
// lower layer (shared, db, scheduler, drivers, mail, native) imports a domain, http/ or the
// composition root; a domain reaches http/ only from its thin http.ts adapter (its services never
// import the transport). The vector store is a package of its own (src/drivers/vector-store/
// README.md): the service, the scripts and every test but the store's mechanism tests reach it
// through its index.ts alone, it imports nothing of the service but the two bottom layers and the
// store API, and no import circle runs inside it. The store API (src/drivers/store-api/), what
// every store takes and answers, is reached through its index.ts and imports nothing of ours.
// `bun run scripts/imports.ts` prints the first two.
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { circles, crossFolderCircles, importGraph, type ImportGraph, upwardImports } from "../helpers/import-graph.ts";
import { ROOT } from "../harness.ts";

const graph = importGraph(join(ROOT, "src"));
/** The imports of the tests and the scripts, into src/ among them. */
const testsAndScripts: ImportGraph = new Map([...importGraph(join(ROOT, "test"), join(ROOT, "src")), ...importGraph(join(ROOT, "scripts"), join(ROOT, "src"))]);
const STORE = "src/drivers/vector-store/";
const API = "src/drivers/store-api/";
/** Tests inside the store's boundary: each tests the mechanism that holds an invariant, by its own module. */
const MECHANISM = "test/drivers/vector-store/mechanism/";

/** The imports of `g` from a file `from` accepts to a file `to` accepts, as `from → to`. */
function edges(g: ImportGraph, from: (file: string) => boolean, to: (file: string) => boolean): string[] {
  return [...g].flatMap(([file, targets]) => (from(file) ? [...targets].filter(to).map((target) => `${file} → ${target}`) : []));
}

/** Imports of the store's files other than its index.ts, from files outside the store. */
const intoStore = (g: ImportGraph) => edges(g, (file) => !file.startsWith(STORE), (to) => to.startsWith(STORE) && to !== `${STORE}index.ts`);
const BOTTOM = /^src\/(shared|native)\//;
/** Imports of the store API's files other than its index.ts, from files outside it. */
const intoApi = (g: ImportGraph) => edges(g, (file) => !file.startsWith(API), (to) => to.startsWith(API) && to !== `${API}index.ts`);

describe("imports", () => {
  test("no circle crosses folders", () => {
    const circles = crossFolderCircles(graph);
    const report = circles.map((c) => `circle of ${c.length} files:\n  ${c.join("\n  ")}`).join("\n");
    expect(circles, report).toEqual([]);
  });

  test("no circle inside the vector store, so each of its files can be read after those it imports", () => {
    const inStore = circles(graph).filter((c) => c.some((file) => file.startsWith(STORE)));
    expect(inStore.map((c) => c.join(" → "))).toEqual([]);
  });

  test("no lower layer imports a domain, http/ or the composition root", () => {
    const upward = upwardImports(graph);
    const report = upward.map(({ from, to }) => `${from} → ${to}`).join("\n");
    expect(upward, `upward imports:\n${report}`).toEqual([]);
  });

  test("only a domain's http.ts imports http/", () => {
    const intoHttp = [...graph].flatMap(([from, targets]) => [...targets].filter((to) => to.startsWith("src/http/")).map((to) => `${from} → ${to}`));
    const strays = intoHttp.filter((line) => line.startsWith("src/domains/") && !/^src\/domains\/[^/]+\/http\.ts /.test(line));
    expect(strays).toEqual([]);
  });

  test("the service reaches the vector store only through its public index.ts", () => {
    expect(intoStore(graph)).toEqual([]);
  });

  test("tests and scripts reach the vector store through index.ts, but for its mechanism tests", () => {
    const outside = intoStore(testsAndScripts).filter((line) => !line.startsWith(MECHANISM));
    expect(outside).toEqual([]);
    // and the mechanism tests are the store's own: they test nothing else
    const elsewhere = edges(testsAndScripts, (file) => file.startsWith(MECHANISM), (to) => to.startsWith("src/") && !to.startsWith(STORE) && to !== `${API}index.ts` && to !== "src/shared/prng.ts");
    expect(elsewhere).toEqual([]);
  });

  test("the store API is reached through its index.ts, and imports nothing of ours", () => {
    expect(intoApi(new Map([...graph, ...testsAndScripts]))).toEqual([]);
    expect(edges(graph, (file) => file.startsWith(API), (to) => !to.startsWith(API))).toEqual([]);
  });

  test("the vector store imports only itself, the store API, shared/ and native/ (which import nothing of the service)", () => {
    expect(edges(graph, (file) => file.startsWith(STORE), (to) => !to.startsWith(STORE) && to !== `${API}index.ts` && !BOTTOM.test(to))).toEqual([]);
    expect(edges(graph, (file) => BOTTOM.test(file), (to) => !BOTTOM.test(to))).toEqual([]);
  });
});
