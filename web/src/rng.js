// Seeded pseudo-random numbers for the playground (data generation, shuffling).
// mulberry32: 32-bit state, fast, good enough for toy data; the same seed gives the same
// sequence in every browser and in Node (only 32-bit integer arithmetic via Math.imul).

/**
 * @param {number} seed any integer (taken modulo 2^32)
 * @returns {{ next(): number, normal(): number, int(n: number): number, shuffle<T>(a: T[] | Int32Array | Uint32Array): void }}
 *   next() uniform in [0, 1); normal() standard normal (Box-Muller); int(n) uniform in [0, n).
 */
export function createRng(seed) {
  let s = seed >>> 0;
  const next = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  let spare = null;
  const normal = () => {
    if (spare !== null) {
      const v = spare;
      spare = null;
      return v;
    }
    let u = 0;
    while (u === 0) u = next();
    const v = next();
    const r = Math.sqrt(-2 * Math.log(u));
    spare = r * Math.sin(2 * Math.PI * v);
    return r * Math.cos(2 * Math.PI * v);
  };
  const int = (n) => Math.floor(next() * n);
  /** Fisher-Yates in place. */
  const shuffle = (a) => {
    for (let i = a.length - 1; i > 0; i--) {
      const j = int(i + 1);
      const t = a[i];
      a[i] = a[j];
      a[j] = t;
    }
  };
  return { next, normal, int, shuffle };
}
