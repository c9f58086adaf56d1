// `bun run bench <name> [args…]` runs scripts/bench/<name>.ts; each benchmark prints its own
// figures beside a baseline measured in the same run.
import { readdirSync } from "node:fs";
import { join } from "node:path";

const dir = join(import.meta.dir, "bench");
const available = readdirSync(dir).filter((f) => f.endsWith(".ts")).map((f) => f.slice(0, -3));
const name = process.argv[2];
if (!name || !available.includes(name)) {
  console.error(`usage: bun run bench <${available.join("|") || "name"}> [args…]`);
  process.exit(2);
}
await import(join(dir, `${name}.ts`));
