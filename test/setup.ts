// Preloaded by bunfig.toml before every test file. Tests that start real processes, build the
// binary or wait on Postgres can take longer than bun's 5 s default on a loaded 2-core machine.
import { setDefaultTimeout } from "bun:test";

setDefaultTimeout(30_000);
