// The source tree's shape (STYLE "Rules of the house"): no import circle crosses folders, and no
// lower layer (shared, db, scheduler, drivers, mail, native) imports a domain, http/ or the
// composition root; a domain reaches http/ only from its thin http.ts adapter (its services never
// import the transport); the vector store is reached through its index.ts alone. `bun run
// scripts/imports.ts` prints the first two.
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { crossFolderCircles, importGraph, upwardImports } from "../helpers/import-graph.ts";
import { ROOT } from "../harness.ts";

const graph = importGraph(join(ROOT, "src"));

describe("imports", () => {
  test("no circle crosses folders", () => {
    const circles = crossFolderCircles(graph);
    const report = circles.map((c) => `circle of ${c.length} files:\n  ${c.join("\n  ")}`).join("\n");
    expect(circles, report).toEqual([]);
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
    const STORE = "src/drivers/vector-store/";
    const inside = [...graph].flatMap(([from, targets]) => (from.startsWith(STORE) ? [] : [...targets].filter((to) => to.startsWith(STORE) && to !== `${STORE}index.ts`).map((to) => `${from} → ${to}`)));
    expect(inside).toEqual([]);
  });
});
