// The committed graph binding (native/prebuilt/linux-x64/vecsync-graph.node) is a build of
// native/graph against the installed usearch; scripts/native/build-graph.sh records what it was
// built from beside it. A change to those sources, or a usearch upgrade, without a rebuild would
// leave a stale binary that every other check passes: this one fails instead.
import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "../harness.ts";

const sha256 = (path: string) => createHash("sha256").update(readFileSync(path)).digest("hex");

describe("native", () => {
  test("the prebuilt graph binding was built from today's native/graph and the installed usearch", () => {
    const recorded = readFileSync(join(ROOT, "native/prebuilt/linux-x64/vecsync-graph.sources"), "utf8");
    const usearch = (JSON.parse(readFileSync(join(ROOT, "node_modules/usearch/package.json"), "utf8")) as { version: string }).version;
    const now = [`graph.cpp ${sha256(join(ROOT, "native/graph/graph.cpp"))}`, `binding.gyp ${sha256(join(ROOT, "native/graph/binding.gyp"))}`, `usearch ${usearch}`, ""].join("\n");
    // Not equal: rebuild with `bash scripts/native/build-graph.sh` and commit the binary with its .sources.
    expect(recorded).toBe(now);
  });
});
