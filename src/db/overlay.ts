// A client (or a transaction) with some of its properties replaced, the rest its own with its
// methods bound to it: what each wrapper of this folder is (write-gate.ts, fast-reads.ts,
// fast-writes.ts). `own`'s getters are read at each access.
export function overlay<T extends object>(target: T, own: object): T {
  return new Proxy(target, {
    get(t, prop, receiver) {
      if (prop in own) return (own as Record<PropertyKey, unknown>)[prop];
      const value = Reflect.get(t, prop, receiver);
      return typeof value === "function" ? value.bind(t) : value;
    },
  });
}
