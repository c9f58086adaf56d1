// A resolver answering from a table, as DNS would: the host guard's tests pin what a name resolves
// to without touching the machine's resolver. Names the table lacks do not resolve.
import { DriverError } from "../../src/shared/errors.ts";
import type { Resolver } from "../../src/shared/host-guard.ts";
import { parseAddress } from "../../src/shared/ip.ts";

export const fakeDns =
  (table: Record<string, string[]>): Resolver =>
  async (name) => {
    const answers = table[name];
    if (!answers) throw new DriverError(`could not resolve host "${name}": ENOTFOUND`, { retryable: false });
    return answers.map((a) => parseAddress(a)!);
  };
