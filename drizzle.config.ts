import { defineConfig } from "drizzle-kit";

export default defineConfig({
  dialect: "sqlite",
  // Every table of the service database: the installation's facts, each domain's, the task queue's.
  schema: ["./src/db/meta-tables.ts", "./src/domains/*/tables.ts", "./src/scheduler/tables.ts"],
  out: "./src/db/migrations",
});
