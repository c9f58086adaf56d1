// The source tree's import graph: circles that cross folders and imports that climb a layer.
// `bun run scripts/imports.ts` prints both; test/foundation/imports.test.ts holds the line.
import { importGraph, crossFolderCircles, upwardImports } from "../test/helpers/import-graph.ts";

const graph = importGraph("src");
const circles = crossFolderCircles(graph);
const upward = upwardImports(graph);
console.log(`${graph.size} files`);
for (const circle of circles) {
  console.log(`\ncircle of ${circle.length} files across folders:`);
  for (const file of circle) console.log(`  ${file}`);
}
console.log(`\n${upward.length} upward imports:`);
for (const { from, to } of upward) console.log(`  ${from} → ${to}`);
