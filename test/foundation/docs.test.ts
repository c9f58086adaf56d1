// The README is for users and stays short; its figures are docs/performance.md's, each with its
// date; the product's docs speak of the product, not of the steps that built it (docs/README.md).
// The store packages' maps (src/drivers/vector-store/ and store-api/ README.md) list every file with its lines.
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { ROOT } from "../harness.ts";

const README = join(ROOT, "README.md");
const read = (path: string) => readFileSync(path, "utf8");
const docs = () => readdirSync(join(ROOT, "docs")).filter((f) => f.endsWith(".md")).map((f) => join(ROOT, "docs", f));

/** The rows of the README's "How fast" table: [measure, figure, date, command]. */
function howFastRows(): string[][] {
  const section = read(README).split(/^## How fast$/m)[1]?.split(/^## /m)[0] ?? "";
  return section
    .split("\n")
    .filter((line) => line.startsWith("|") && !/^\|\s*(Measure|-)/.test(line))
    .map((line) => line.split("|").slice(1, -1).map((cell) => cell.trim()));
}

describe("happy", () => {
  test("README.md is under 15 KB", () => {
    expect(statSync(README).size).toBeLessThan(15_000);
  });

  test("every figure of the README's 'How fast' table is in docs/performance.md, with its date", () => {
    const performance = read(join(ROOT, "docs/performance.md"));
    const rows = howFastRows();
    expect(rows.length).toBeGreaterThan(0);
    for (const [measure, figure, date] of rows) {
      expect(date, `${measure}: a figure carries its date`).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      expect(performance, `${measure}: its date`).toContain(date!);
      for (const number of figure!.match(/\d[\d,.]*(?:–\d[\d,.]*)?/g) ?? []) {
        expect(performance, `${measure}: ${number}`).toContain(number.replace(/[.,]$/, ""));
      }
    }
  });

  test("the README and docs/ carry no development-step labels", () => {
    const label = /\b(stop \d+|issue \d+|waves?)\b/i;
    for (const path of [README, ...docs()]) {
      const hits = read(path).split("\n").filter((line) => label.test(line));
      expect(hits, path).toEqual([]);
    }
  });

  test.each(["src/drivers/vector-store", "src/drivers/store-api"])("%s/README.md lists each of its files with its line count", (folder) => {
    const dir = join(ROOT, folder);
    const files = (readdirSync(dir, { recursive: true }) as string[]).filter((f) => f.endsWith(".ts")).sort();
    const listed = new Map([...read(join(dir, "README.md")).matchAll(/^\| `([^`]+\.ts)` \|.*\| (\d+) \|$/gm)].map((m) => [m[1]!, Number(m[2])]));
    const lines = (f: string) => read(join(dir, f)).split("\n").length - 1;
    expect([...listed.keys()].sort(), relative(ROOT, dir)).toEqual(files);
    expect(Object.fromEntries(listed)).toEqual(Object.fromEntries([...listed.keys()].map((f) => [f, lines(f)])));
  });
});
