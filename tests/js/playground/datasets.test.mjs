// The playground's data (web/src/datasets.js, web/src/mnist.js): shapes, label balance,
// seeded determinism, noise, the stratified split, IDX parsing and the drawing pipeline.
import { describe, it, expect } from 'vitest';
import { generateToy, splitTrainTest, boundaryGrid, TOY_KINDS } from '../../../web/src/datasets.js';
import { parseIdx, normaliseInto, drawingTo28, MNIST_MEAN, MNIST_STD } from '../../../web/src/mnist.js';

const counts = (y, k) => {
  const c = new Array(k).fill(0);
  for (const v of y) c[v]++;
  return c;
};

describe('toy generators', () => {
  for (const kind of TOY_KINDS) {
    it(`${kind}: shapes, balance, range, determinism`, () => {
      const d = generateToy({ kind, n: 300, noise: 0, seed: 7 });
      expect(d.x).toBeInstanceOf(Float32Array);
      expect(d.y).toBeInstanceOf(Int32Array);
      expect(d.n).toBe(300);
      expect(d.x.length).toBe(600);
      expect(d.itemShape).toEqual([2]);
      expect(d.numClasses).toBe(2);
      expect(counts(d.y, 2)).toEqual([150, 150]);
      // Noise-free points stay inside the unit square (gauss: sd 0.12 around radius 0.5
      // could in principle leave it; 0.5 + 4 sd = 0.98).
      for (const v of d.x) expect(Math.abs(v)).toBeLessThan(1);
      const again = generateToy({ kind, n: 300, noise: 0, seed: 7 });
      expect(again.x).toEqual(d.x);
      expect(again.y).toEqual(d.y);
      const other = generateToy({ kind, n: 300, noise: 0, seed: 8 });
      expect(other.y).not.toEqual(d.y); // another seed, another order
    });
  }

  it('labels follow each set\'s rule when there is no noise', () => {
    const xor = generateToy({ kind: 'xor', n: 400, seed: 1 });
    for (let i = 0; i < xor.n; i++) {
      const [a, b] = [xor.x[2 * i], xor.x[2 * i + 1]];
      expect(xor.y[i]).toBe(a * b > 0 ? 1 : 0);
      expect(Math.min(Math.abs(a), Math.abs(b))).toBeGreaterThanOrEqual(0.05 - 1e-7); // the gap
    }
    const circle = generateToy({ kind: 'circle', n: 400, seed: 1 });
    for (let i = 0; i < circle.n; i++) {
      const r = Math.hypot(circle.x[2 * i], circle.x[2 * i + 1]);
      if (circle.y[i] === 0) expect(r).toBeLessThanOrEqual(0.4 + 1e-6);
      else expect(r).toBeGreaterThanOrEqual(0.55 - 1e-6);
    }
    const gauss = generateToy({ kind: 'gauss', n: 400, seed: 1 });
    // Clusters at 45° (class 0) and 225° (class 1): the sign of x + y separates nearly all.
    let agree = 0;
    for (let i = 0; i < gauss.n; i++) agree += (gauss.x[2 * i] + gauss.x[2 * i + 1] > 0 ? 0 : 1) === gauss.y[i] ? 1 : 0;
    expect(agree / gauss.n).toBeGreaterThan(0.99);
  });

  it('spiral arms are point-symmetric: class 1 is class 0 turned by 180°', () => {
    const d = generateToy({ kind: 'spiral', n: 200, seed: 3 });
    const key = (x, y) => `${x.toFixed(4)},${y.toFixed(4)}`;
    const c0 = new Set();
    for (let i = 0; i < d.n; i++) if (d.y[i] === 0) c0.add(key(-d.x[2 * i], -d.x[2 * i + 1]));
    let matched = 0;
    for (let i = 0; i < d.n; i++) if (d.y[i] === 1 && c0.has(key(d.x[2 * i], d.x[2 * i + 1]))) matched++;
    expect(matched).toBe(100);
  });

  it('gaussian clusters: k classes, balanced', () => {
    const d = generateToy({ kind: 'gauss', n: 503, classes: 5, seed: 2 });
    expect(d.numClasses).toBe(5);
    expect(d.n).toBe(500); // rounded down to a multiple of 5
    expect(counts(d.y, 5)).toEqual([100, 100, 100, 100, 100]);
  });

  it('noise moves points by about noise * 0.5 (sd) and keeps labels', () => {
    const clean = generateToy({ kind: 'circle', n: 2000, noise: 0, seed: 4 });
    const noisy = generateToy({ kind: 'circle', n: 2000, noise: 0.4, seed: 4 });
    expect(counts(noisy.y, 2)).toEqual([1000, 1000]);
    // The empty ring between the classes (0.4 < r < 0.55) fills with points.
    const inGap = (d) => {
      let k = 0;
      for (let i = 0; i < d.n; i++) {
        const r = Math.hypot(d.x[2 * i], d.x[2 * i + 1]);
        if (r > 0.4 && r < 0.55) k++;
      }
      return k;
    };
    expect(inGap(clean)).toBe(0);
    expect(inGap(noisy)).toBeGreaterThan(100);
    // Same seed: same points in the same order, each moved by Gaussian jitter of sd
    // noise * 0.5 = 0.2 per coordinate, labels unchanged.
    expect(noisy.y).toEqual(clean.y);
    const diffs = Array.from(noisy.x, (v, i) => v - clean.x[i]);
    const mean = diffs.reduce((a, b) => a + b) / diffs.length;
    const sd = Math.sqrt(diffs.reduce((a, b) => a + (b - mean) ** 2, 0) / (diffs.length - 1));
    expect(Math.abs(mean)).toBeLessThan(0.02); // 4000 draws: se of the mean 0.003
    expect(sd).toBeGreaterThan(0.19); // se of the sd ~0.0022
    expect(sd).toBeLessThan(0.21);
  });

  it('rejects bad options with the reason', () => {
    expect(() => generateToy({ kind: 'moons', n: 100 })).toThrow(/unknown set "moons"/);
    expect(() => generateToy({ kind: 'xor', n: 5 })).toThrow(/number of points/);
    expect(() => generateToy({ kind: 'xor', n: 100.5 })).toThrow(/number of points/);
    expect(() => generateToy({ kind: 'xor', n: 100, noise: 2 })).toThrow(/noise must be in/);
    expect(() => generateToy({ kind: 'gauss', n: 100, classes: 9 })).toThrow(/classes must be/);
  });
});

describe('train/test split', () => {
  it('is stratified, complete and disjoint', () => {
    const d = generateToy({ kind: 'gauss', n: 600, classes: 3, seed: 5 });
    const { train, test } = splitTrainTest(d, 0.25, 5);
    expect(train.n + test.n).toBe(600);
    expect(counts(test.y, 3)).toEqual([50, 50, 50]);
    expect(counts(train.y, 3)).toEqual([150, 150, 150]);
    expect(train.x.length).toBe(train.n * 2);
    const key = (x, i) => `${x[2 * i]},${x[2 * i + 1]}`;
    const all = new Set();
    for (let i = 0; i < d.n; i++) all.add(key(d.x, i));
    const seen = new Set();
    for (const part of [train, test]) {
      for (let i = 0; i < part.n; i++) {
        const k = key(part.x, i);
        expect(all.has(k)).toBe(true);
        expect(seen.has(k)).toBe(false);
        seen.add(k);
      }
    }
  });

  it('keeps each point with its label', () => {
    const d = generateToy({ kind: 'xor', n: 200, seed: 6 });
    const { train, test } = splitTrainTest(d, 0.5, 1);
    for (const p of [train, test]) for (let i = 0; i < p.n; i++) expect(p.y[i]).toBe(p.x[2 * i] * p.x[2 * i + 1] > 0 ? 1 : 0);
  });

  it('rejects fractions that leave a part empty', () => {
    const d = generateToy({ kind: 'xor', n: 20, seed: 6 });
    expect(() => splitTrainTest(d, 0, 1)).toThrow(/test fraction/);
    expect(() => splitTrainTest(d, 1, 1)).toThrow(/test fraction/);
    expect(() => splitTrainTest(d, 0.01, 1)).toThrow(/empty part/);
  });
});

describe('boundary grid', () => {
  it('covers the square row by row from the top left', () => {
    const g = boundaryGrid(4, -1, 1);
    expect(g.length).toBe(32);
    expect([g[0], g[1]]).toEqual([-0.75, 0.75]);
    expect([g[6], g[7]]).toEqual([0.75, 0.75]); // end of the first row
    expect([g[30], g[31]]).toEqual([0.75, -0.75]);
  });
});

describe('MNIST helpers', () => {
  const idx = (magic, dims, payload) => {
    const b = new Uint8Array(4 + 4 * dims.length + payload.length);
    const v = new DataView(b.buffer);
    v.setUint32(0, magic);
    dims.forEach((d, i) => v.setUint32(4 + 4 * i, d));
    b.set(payload, 4 + 4 * dims.length);
    return b;
  };

  it('parses IDX files and checks them', () => {
    const f = idx(0x803, [2, 2, 3], Uint8Array.from({ length: 12 }, (_, i) => i));
    const p = parseIdx(f, 3);
    expect(p.dims).toEqual([2, 2, 3]);
    expect(Array.from(p.data)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    expect(() => parseIdx(f, 1)).toThrow(/expected 1 dims/);
    expect(() => parseIdx(idx(0x0d03, [1], [0]))).toThrow(/bad magic number 0x00000d03/);
    expect(() => parseIdx(idx(0x801, [5], [1, 2]))).toThrow(/need 13 bytes, the file has 10/);
    expect(() => parseIdx(new Uint8Array(3))).toThrow(/too short/);
  });

  it('normalises as the engine\'s MnistBatcher, in the given order', () => {
    const pixels = new Uint8Array(784 * 2);
    pixels[0] = 255;
    pixels[784 + 5] = 51;
    const out = new Float32Array(784 * 2);
    normaliseInto(out, pixels, 0, 2, Int32Array.from([1, 0]));
    expect(out[5]).toBeCloseTo((51 / 255 - MNIST_MEAN) / MNIST_STD, 5);
    expect(out[784]).toBeCloseTo((1 - MNIST_MEAN) / MNIST_STD, 5);
    expect(out[1]).toBeCloseTo(-MNIST_MEAN / MNIST_STD, 5);
  });

  it('turns a drawing into a centred 20x20-fitted digit', () => {
    const size = 100;
    const ink = new Float32Array(size * size);
    // a vertical bar in the top-left corner: x 10..19, y 5..54
    for (let y = 5; y < 55; y++) for (let x = 10; x < 20; x++) ink[y * size + x] = 1;
    const img = drawingTo28(ink, size);
    let mass = 0;
    let cx = 0;
    let cy = 0;
    let top = 28;
    let bottom = -1;
    for (let y = 0; y < 28; y++) {
      for (let x = 0; x < 28; x++) {
        const v = img[y * 28 + x];
        mass += v;
        cx += v * (x + 0.5);
        cy += v * (y + 0.5);
        if (v > 0) {
          top = Math.min(top, y);
          bottom = Math.max(bottom, y);
        }
      }
    }
    expect(bottom - top + 1).toBe(20); // the long side scaled to 20
    expect(cx / mass).toBeCloseTo(14, 0);
    expect(cy / mass).toBeCloseTo(14, 0);
    expect(mass).toBeCloseTo(20 * 4, -1); // 50x10 box -> 20x4
    expect(Array.from(drawingTo28(new Float32Array(size * size), size)).every((v) => v === 0)).toBe(true);
  });
});
