// Ties in score are broken by primary key in the source's order (CONTRACT 7): numerically for
// numeric keys (as BigInt when integral, so keys past 2^53 still order right), else by code
// point, which is the source's order for the usual C/ucs_basic collations.
const INTEGER = /^-?\d+$/;

export function comparePk(numeric: boolean): (a: string, b: string) => number {
  if (!numeric) return (a, b) => (a < b ? -1 : a > b ? 1 : 0);
  return (a, b) => {
    if (INTEGER.test(a) && INTEGER.test(b)) {
      const x = BigInt(a);
      const y = BigInt(b);
      return x < y ? -1 : x > y ? 1 : 0;
    }
    const diff = Number(a) - Number(b);
    return diff !== 0 && !Number.isNaN(diff) ? Math.sign(diff) : a < b ? -1 : a > b ? 1 : 0;
  };
}
