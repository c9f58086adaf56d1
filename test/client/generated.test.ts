// The client package's generated sources (scripts/client-types.ts) are those of the server as it is
// now: a procedure, an input or an answer changed without `npm run generate` in packages/client fails
// here. And the package carries the service's version, the one its types were generated from.
import { expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { generateClientTypes, OUT } from "../../scripts/client-types.ts";
import { VERSION } from "../../src/version.ts";
import { ROOT } from "../harness.ts";

// Type-checks the server's sources behind rpc/router.ts: slow on a loaded 2-core machine.
setDefaultTimeout(90_000);

test("packages/client/src/{filters,router}.ts match the server's types", () => {
  const generated = generateClientTypes();
  expect(readFileSync(OUT.filters, "utf8")).toBe(generated.filters);
  expect(readFileSync(OUT.router, "utf8")).toBe(generated.router);
});

test("the package's version is the service's, its tRPC the one the server runs", () => {
  const manifest = JSON.parse(readFileSync(join(ROOT, "packages/client/package.json"), "utf8"));
  expect(manifest.version).toBe(VERSION);
  for (const dep of ["@trpc/client", "@trpc/server"]) {
    const installed = JSON.parse(readFileSync(join(ROOT, "node_modules", dep, "package.json"), "utf8")).version;
    expect([dep, manifest.dependencies[dep]]).toEqual([dep, installed]);
  }
});
