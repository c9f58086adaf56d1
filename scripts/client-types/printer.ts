// Prints a checker's type as plain TypeScript: objects, unions, literals and arrays written out in
// full, so the client package's declarations stand alone — no server module, arktype or drizzle
// type survives into them. Only the aliases named in `named` are kept as references (the filter
// language, whose types are recursive, and the ones the package exports by name).
import ts from "typescript";

export type Printer = { print(type: ts.Type): string };

/** Types that travel as JSON: a Date leaves the server as its ISO string. */
const AS_JSON: Record<string, string> = { Date: "string" };

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const key = (name: string) => (IDENTIFIER.test(name) ? name : JSON.stringify(name));

export function createPrinter(checker: ts.TypeChecker, named: (alias: ts.Symbol) => string | null): Printer {
  const open = new Set<ts.Type>();

  function print(type: ts.Type, depth = 0): string {
    const alias = type.aliasSymbol ? named(type.aliasSymbol) : null;
    if (alias !== null) {
      const args = type.aliasTypeArguments?.map((t) => print(t, depth)) ?? [];
      return args.length > 0 ? `${alias}<${args.join(", ")}>` : alias;
    }
    if (open.has(type)) throw new Error(`a recursive type without a public name: ${checker.typeToString(type)}`);
    open.add(type);
    try {
      return printStructure(type, depth);
    } finally {
      open.delete(type);
    }
  }

  function printStructure(type: ts.Type, depth: number): string {
    const f = type.flags;
    if (f & ts.TypeFlags.Any || f & ts.TypeFlags.Unknown) return "unknown";
    if (f & ts.TypeFlags.String) return "string";
    if (f & ts.TypeFlags.Number) return "number";
    if (f & ts.TypeFlags.Boolean) return "boolean";
    if (f & ts.TypeFlags.Null) return "null";
    if (f & ts.TypeFlags.Undefined) return "undefined";
    if (f & ts.TypeFlags.Void) return "void";
    if (f & ts.TypeFlags.Never) return "never";
    if (f & ts.TypeFlags.StringLiteral) return JSON.stringify((type as ts.StringLiteralType).value);
    if (f & ts.TypeFlags.NumberLiteral) return String((type as ts.NumberLiteralType).value);
    if (f & ts.TypeFlags.BooleanLiteral) return checker.typeToString(type);
    if (type.isUnion()) return printUnion(type.types, depth);
    if (type.isIntersection()) return type.types.map((t) => wrap(print(t, depth))).join(" & ");
    if (f & ts.TypeFlags.Object) return printObject(type as ts.ObjectType, depth);
    throw new Error(`cannot print ${checker.typeToString(type)} (flags ${f})`);
  }

  function printUnion(types: readonly ts.Type[], depth: number): string {
    const hasTrue = types.some((t) => t.flags & ts.TypeFlags.BooleanLiteral && checker.typeToString(t) === "true");
    const hasFalse = types.some((t) => t.flags & ts.TypeFlags.BooleanLiteral && checker.typeToString(t) === "false");
    const parts: string[] = [];
    for (const t of types) {
      if (t.flags & ts.TypeFlags.BooleanLiteral && hasTrue && hasFalse) {
        if (!parts.includes("boolean")) parts.push("boolean");
        continue;
      }
      const text = wrap(print(t, depth));
      if (!parts.includes(text)) parts.push(text);
    }
    return parts.join(" | ");
  }

  function printObject(type: ts.ObjectType, depth: number): string {
    const name = type.getSymbol()?.getName();
    if (name && AS_JSON[name]) return AS_JSON[name];
    if (checker.isTupleType(type)) {
      const elements = checker.getTypeArguments(type as ts.TypeReference).map((t) => print(t, depth));
      return `[${elements.join(", ")}]`;
    }
    if (checker.isArrayType(type)) {
      const [element] = checker.getTypeArguments(type as ts.TypeReference);
      return `${wrap(print(element!, depth))}[]`;
    }
    if (type.getCallSignatures().length > 0 || type.getConstructSignatures().length > 0) {
      throw new Error(`cannot print a function type: ${checker.typeToString(type)}`);
    }
    const pad = "  ".repeat(depth + 1);
    const lines: string[] = [];
    for (const info of checker.getIndexInfosOfType(type)) {
      lines.push(`${pad}[key: ${print(info.keyType, depth + 1)}]: ${print(info.type, depth + 1)};`);
    }
    for (const prop of checker.getPropertiesOfType(type)) {
      const optional = (prop.flags & ts.SymbolFlags.Optional) !== 0;
      const propType = checker.getTypeOfSymbol(prop);
      lines.push(`${pad}${key(prop.getName())}${optional ? "?" : ""}: ${optional ? printOptional(propType, depth + 1) : print(propType, depth + 1)};`);
    }
    if (lines.length === 0) return "{}";
    return `{\n${lines.join("\n")}\n${"  ".repeat(depth)}}`;
  }

  /** An optional property's type carries `undefined`; its `?` says so already. */
  function printOptional(type: ts.Type, depth: number): string {
    if (!type.isUnion() || (type.aliasSymbol && named(type.aliasSymbol) !== null)) return print(type, depth);
    const kept = type.types.filter((t) => !(t.flags & ts.TypeFlags.Undefined));
    return kept.length === 1 ? print(kept[0]!, depth) : printUnion(kept, depth);
  }

  return { print: (type) => print(type) };
}

/** Parenthesises a union or intersection that stands inside another, or before `[]`. */
function wrap(text: string): string {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === "{" || c === "(" || c === "[" || c === "<") depth++;
    else if (c === "}" || c === ")" || c === "]" || c === ">") depth--;
    else if (depth === 0 && (c === "|" || c === "&") && text[i - 1] === " ") return `(${text})`;
  }
  return text;
}
