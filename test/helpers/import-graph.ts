// The import graph of a source tree, read from the files' own import statements (type-only
// imports included: a type is a dependency a reader has to follow too).
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

export type ImportGraph = Map<string, Set<string>>;

const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^;]*?\sfrom\s+["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.ts$/.test(name) && !name.endsWith(".d.ts") ? [path] : [];
  });
}

/**
 * File → the files of tree `into` (by default its own) it imports, paths relative to the trees'
 * parent (e.g. `src/x.ts`; `test/y.ts` → `src/x.ts` with `into` src).
 */
export function importGraph(root: string, into: string = root): ImportGraph {
  const base = dirname(resolve(into));
  const graph: ImportGraph = new Map();
  const files = sourceFiles(resolve(root));
  const known = new Set(into === root ? files : sourceFiles(resolve(into)));
  for (const file of files) {
    const targets = new Set<string>();
    for (const match of readFileSync(file, "utf8").matchAll(IMPORT)) {
      const spec = match[1] ?? match[2] ?? "";
      if (!spec.startsWith(".")) continue;
      const target = resolve(dirname(file), spec);
      if (known.has(target)) targets.add(relative(base, target));
    }
    graph.set(relative(base, file), targets);
  }
  return graph;
}

/** Strongly connected components (Tarjan), each of two or more files. */
export function circles(graph: ImportGraph): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string) => {
    index.set(node, next);
    low.set(node, next++);
    stack.push(node);
    onStack.add(node);
    for (const to of graph.get(node) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node)!, low.get(to)!));
      } else if (onStack.has(to)) low.set(node, Math.min(low.get(node)!, index.get(to)!));
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    for (let member = stack.pop()!; ; member = stack.pop()!) {
      onStack.delete(member);
      component.push(member);
      if (member === node) break;
    }
    if (component.length > 1) found.push(component.sort());
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

/** Circles whose files sit in more than one folder (a circle inside one folder is that folder's business). */
export function crossFolderCircles(graph: ImportGraph): string[][] {
  return circles(graph).filter((component) => new Set(component.map((file) => dirname(file))).size > 1);
}

// The layers, lowest first. A file may import its own layer and those below; the composition root
// (src/*.ts) sits above everything.
const LOWER = ["shared", "db", "scheduler", "drivers", "mail", "native"];
const UPPER = ["domains", "http"];

function layerOf(file: string): "lower" | "upper" | "root" | "other" {
  const [, top, rest] = file.split("/");
  if (rest === undefined) return "root";
  if (LOWER.includes(top!)) return "lower";
  if (UPPER.includes(top!)) return "upper";
  return "other";
}

/** Imports from a lower layer (shared, db, scheduler, drivers…) up to domains/, http/ or the composition root. */
export function upwardImports(graph: ImportGraph): { from: string; to: string }[] {
  const found: { from: string; to: string }[] = [];
  for (const [from, targets] of graph) {
    if (layerOf(from) !== "lower") continue;
    for (const to of targets) if (layerOf(to) === "upper" || layerOf(to) === "root") found.push({ from, to });
  }
  return found.sort((a, b) => a.from.localeCompare(b.from) || a.to.localeCompare(b.to));
}
