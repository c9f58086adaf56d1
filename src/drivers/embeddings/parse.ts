// Small checked accessors for provider answers: a wrong shape becomes a message, not a TypeError.

export function field(value: unknown, name: string): unknown {
  if (typeof value !== "object" || value === null || !(name in value)) throw new Error(`"${name}" is missing`);
  return (value as Record<string, unknown>)[name];
}

export function list(value: unknown, what: string): unknown[] {
  if (!Array.isArray(value)) throw new Error(`"${what}" is not a list`);
  return value;
}

export function num(value: unknown, what: string): number {
  if (typeof value !== "number") throw new Error(`"${what}" is not a number`);
  return value;
}
