// A test's stand-in rule, added after the service's real ones (src/wiring.ts): e.g. a "widget"
// that uses environments named `busy-*`, for the domain's own 409 tests.
import type { Dependents, Services } from "../../src/services.ts";

export function addDependent<K extends keyof Dependents>(services: Services, key: K, rule: Dependents[K][number]): void {
  services.dependents = { ...services.dependents, [key]: [...services.dependents[key], rule] };
}
