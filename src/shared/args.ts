// Command-line flags through node:util's parseArgs, strict: `--name value` and `--name=value`,
// booleans as bare `--name`, nothing positional. parseArgs' own messages run to three lines and
// suggest `--` tricks; a refused command line is one line here ("unknown flag --x"), so callers
// can print it and exit 2.
import { parseArgs } from "node:util";

export class ArgsError extends Error {}

export type FlagSpec = { strings?: readonly string[]; booleans?: readonly string[] };

export type Flags = { strings: Record<string, string>; booleans: Set<string> };

function optionsOf(spec: FlagSpec) {
  const options: Record<string, { type: "string" | "boolean" }> = {};
  for (const name of spec.strings ?? []) options[name] = { type: "string" };
  for (const name of spec.booleans ?? []) options[name] = { type: "boolean" };
  return options;
}

/** Parses `args` against `spec`; throws ArgsError with one line naming the first problem. */
export function parseFlags(args: readonly string[], spec: FlagSpec): Flags {
  const options = optionsOf(spec);
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({ args: [...args], options, strict: true, allowPositionals: false }).values as typeof values;
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (typeof code !== "string" || !code.startsWith("ERR_PARSE_ARGS_")) throw err;
    throw new ArgsError(diagnose(args, options) ?? String((err as Error).message).split("\n")[0]);
  }
  const flags: Flags = { strings: {}, booleans: new Set() };
  for (const [name, value] of Object.entries(values)) {
    if (typeof value === "string") flags.strings[name] = value;
    else if (value === true) flags.booleans.add(name);
  }
  return flags;
}

/** The first problem in `args`, read from parseArgs' lenient tokens (the strict error does not say which flag in a field). */
function diagnose(args: readonly string[], options: Record<string, { type: "string" | "boolean" }>): string | null {
  const { tokens } = parseArgs({ args: [...args], options, strict: false, allowPositionals: true, tokens: true });
  for (const token of tokens) {
    if (token.kind === "positional") return `unexpected argument "${token.value}"`;
    if (token.kind !== "option") continue;
    const option = options[token.name];
    if (!option) return `unknown flag ${token.rawName}`;
    // Lenient mode takes `--host` in `--port --host x` as the port; strict mode refuses it as ambiguous.
    const valueLooksLikeFlag = !token.inlineValue && token.value?.startsWith("-");
    if (option.type === "string" && (token.value === undefined || valueLooksLikeFlag)) return `${token.rawName} needs a value`;
    if (option.type === "boolean" && token.inlineValue) return `${token.rawName} takes no value`;
  }
  return null; // not seen: parseArgs' own first line then
}
