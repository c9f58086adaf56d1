// The source tree's shape (STYLE "Rules of the house"): no import circle crosses folders, and no
// lower layer (shared, db, scheduler, drivers, mail, native) imports a domain, http/ or the
// composition root. `bun run scripts/imports.ts` prints the same report.
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
});
