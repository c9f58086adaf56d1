// The client package's generated sources (scripts/client-types.ts) are those of the server as it is
// now: a procedure, an input or an answer changed without `npm run generate` in packages/client fails here.
import { expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync } from "node:fs";
import { generateClientTypes, OUT } from "../../scripts/client-types.ts";

// Type-checks the server's sources behind rpc/router.ts: slow on a loaded 2-core machine.
setDefaultTimeout(90_000);

test("packages/client/src/{filters,router}.ts match the server's types", () => {
  const generated = generateClientTypes();
  expect(readFileSync(OUT.filters, "utf8")).toBe(generated.filters);
  expect(readFileSync(OUT.router, "utf8")).toBe(generated.router);
});
