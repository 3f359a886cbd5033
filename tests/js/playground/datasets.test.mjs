// The playground's data (web/src/datasets.js, web/src/mnist.js): shapes, label balance,
// seeded determinism, noise, the stratified split, IDX parsing and the drawing pipeline.
import { describe, it, expect } from 'vitest';
import { generateToy, splitTrainTest, boundaryGrid, CLASSIFY_KINDS, REGRESS_KINDS, mgaussTarget, planeTarget } from '../../../web/src/datasets.js';
import { parseIdx, normaliseInto, drawingTo28, MNIST_MEAN, MNIST_STD } from '../../../web/src/mnist.js';

const counts = (y, k) => {
  const c = new Array(k).fill(0);
  for (const v of y) c[v]++;
  return c;
};

describe('toy generators', () => {
  for (const kind of CLASSIFY_KINDS) {
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
      expect(Math.min(Math.abs(a), Math.abs(b))).toBeGreaterThanOrEqual(0.05 - 1e-7); // the gap (0.3 / 6)
      expect(Math.max(Math.abs(a), Math.abs(b))).toBeLessThanOrEqual(0.9 + 1e-6);
    }
    const circle = generateToy({ kind: 'circle', n: 400, seed: 1 });
    for (let i = 0; i < circle.n; i++) {
      const r = Math.hypot(circle.x[2 * i], circle.x[2 * i + 1]);
      // TF Playground's radii: inside 2.5, ring 3.5 .. 5 (of 6).
      if (circle.y[i] === 0) expect(r).toBeLessThanOrEqual(2.5 / 6 + 1e-6);
      else expect(r).toBeGreaterThanOrEqual(3.5 / 6 - 1e-6);
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

  it('noise on TF Playground\'s scale: xor and circle flip labels near the boundary, points stay', () => {
    const clean = generateToy({ kind: 'circle', n: 2000, noise: 0, seed: 4 });
    const noisy = generateToy({ kind: 'circle', n: 2000, noise: 40, seed: 4 });
    expect(noisy.x).toEqual(clean.x); // the same draw: noise moves where the label is read
    // A label flips when the point moved by uniform jitter ±5·0.4 = ±2 (of 6) per coordinate
    // crosses radius 2.5 (of 6): count the flips and check them against the rule.
    let flips = 0;
    for (let i = 0; i < clean.n; i++) if (noisy.y[i] !== clean.y[i]) flips++;
    expect(flips).toBeGreaterThan(100);
    expect(flips).toBeLessThan(900);
    // Far from the boundary nothing can flip: inside radius 2.5 - 2·√2 < 0 none; points at
    // r >= 2.5 + 2√2 = 5.33 do not exist; so check the inner disc r < 0.5 (of 6) keeps 0.
    for (let i = 0; i < clean.n; i++) {
      const r = Math.hypot(clean.x[2 * i], clean.x[2 * i + 1]) * 6;
      if (r + 2 * Math.SQRT2 < 2.5) expect(noisy.y[i]).toBe(0);
    }
    const xor0 = generateToy({ kind: 'xor', n: 1000, noise: 0, seed: 9 });
    const xor50 = generateToy({ kind: 'xor', n: 1000, noise: 50, seed: 9 });
    let xf = 0;
    for (let i = 0; i < xor0.n; i++) {
      if (xor50.y[i] !== xor0.y[i]) {
        xf++;
        // Only a point within 2.5 (of 6) of an axis can change sides.
        expect(Math.min(Math.abs(xor0.x[2 * i]), Math.abs(xor0.x[2 * i + 1])) * 6).toBeLessThan(2.5 + 1e-4);
      }
    }
    expect(xf).toBeGreaterThan(50);
  });

  it('noise moves the spiral by uniform ±f (of 6) and widens the clusters to variance 4 at 50 %', () => {
    const clean = generateToy({ kind: 'spiral', n: 2000, noise: 0, seed: 4 });
    const noisy = generateToy({ kind: 'spiral', n: 2000, noise: 50, seed: 4 });
    expect(noisy.y).toEqual(clean.y);
    let maxMove = 0;
    const d = Array.from(noisy.x, (v, i) => (v - clean.x[i]) * 6);
    for (const v of d) maxMove = Math.max(maxMove, Math.abs(v));
    expect(maxMove).toBeLessThanOrEqual(0.5 + 1e-5); // uniform in [-0.5, 0.5]
    const sd = Math.sqrt(d.reduce((a, b) => a + b * b, 0) / d.length);
    expect(sd).toBeGreaterThan(0.27); // uniform ±0.5: sd 0.2887
    expect(sd).toBeLessThan(0.31);
    const spread = (noise) => {
      const g = generateToy({ kind: 'gauss', n: 4000, noise, seed: 2 });
      let s2 = 0;
      for (let i = 0; i < g.n; i++) {
        const c = g.y[i] === 0 ? 0.5 / Math.SQRT2 : -0.5 / Math.SQRT2; // the two centres
        s2 += ((g.x[2 * i] - c) * 6) ** 2;
      }
      return s2 / g.n; // variance per coordinate in TF Playground's units
    };
    expect(spread(0)).toBeGreaterThan(0.45);
    expect(spread(0)).toBeLessThan(0.55);
    expect(spread(50)).toBeGreaterThan(3.6);
    expect(spread(50)).toBeLessThan(4.4);
  });

  it('rejects bad options with the reason', () => {
    expect(() => generateToy({ kind: 'moons', n: 100 })).toThrow(/unknown set "moons"/);
    expect(() => generateToy({ kind: 'xor', n: 5 })).toThrow(/number of points/);
    expect(() => generateToy({ kind: 'xor', n: 100.5 })).toThrow(/number of points/);
    expect(() => generateToy({ kind: 'xor', n: 100, noise: 51 })).toThrow(/noise must be in/);
    expect(() => generateToy({ kind: 'xor', n: 100, noise: -1 })).toThrow(/noise must be in/);
    expect(() => generateToy({ kind: 'gauss', n: 100, classes: 9 })).toThrow(/classes must be/);
  });
});

describe('regression sets (TF Playground\'s Plane and Multi Gaussian)', () => {
  it('plane: target (x1 + x2)·6/10 without noise; n points; float targets', () => {
    const d = generateToy({ kind: 'plane', n: 301, seed: 3 });
    expect(d.task).toBe('regression');
    expect(d.n).toBe(301); // no rounding to classes
    expect(d.y).toBeInstanceOf(Float32Array);
    expect(d.numClasses).toBe(1);
    for (let i = 0; i < d.n; i++) {
      expect(d.y[i]).toBeCloseTo((d.x[2 * i] + d.x[2 * i + 1]) * 0.6, 5);
      expect(Math.abs(d.x[2 * i])).toBeLessThanOrEqual(1);
    }
    expect(planeTarget(1, 1)).toBeCloseTo(1.2, 12); // TF Playground's corners reach 1.2
  });

  it('mgauss: six bumps of height ±1 and radius 2 (of 6), the largest |value| wins', () => {
    // Hand-computed: at a centre the value is its sign; 1 unit (of 6) away, 1 - 1/2.
    expect(mgaussTarget(-4 / 6, 2.5 / 6)).toBeCloseTo(1, 12);
    expect(mgaussTarget(0, 2.5 / 6)).toBeCloseTo(-1, 12);
    expect(mgaussTarget(4 / 6, -2.5 / 6)).toBeCloseTo(-1, 12);
    expect(mgaussTarget(0, 3.5 / 6)).toBeCloseTo(-0.5, 12);
    expect(mgaussTarget(0, 0)).toBeCloseTo(0, 12); // 2.5 from every centre
    const d = generateToy({ kind: 'mgauss', n: 500, seed: 3 });
    for (let i = 0; i < d.n; i++) expect(d.y[i]).toBeCloseTo(mgaussTarget(d.x[2 * i], d.x[2 * i + 1]), 6);
    for (const v of d.y) expect(Math.abs(v)).toBeLessThanOrEqual(1);
  });

  it('noise reads the target at the point moved by ±6·f (of 6): error bounded, points unchanged', () => {
    const clean = generateToy({ kind: 'plane', n: 1000, noise: 0, seed: 5 });
    const noisy = generateToy({ kind: 'plane', n: 1000, noise: 30, seed: 5 });
    expect(noisy.x).toEqual(clean.x);
    let maxErr = 0;
    let moved = 0;
    for (let i = 0; i < clean.n; i++) {
      const e = Math.abs(noisy.y[i] - clean.y[i]);
      maxErr = Math.max(maxErr, e);
      if (e > 0.05) moved++;
    }
    // |Δ(x1 + x2)| <= 2 · 6 · 0.3 = 3.6 (of 6) -> |Δtarget| <= 0.36.
    expect(maxErr).toBeLessThanOrEqual(0.36 + 1e-5);
    expect(moved).toBeGreaterThan(500);
  });

  it('splits a regression set without strata, keeping float targets', () => {
    const d = generateToy({ kind: 'mgauss', n: 401, seed: 6 });
    const { train, test } = splitTrainTest(d, 0.25, 6);
    expect(test.n).toBe(100);
    expect(train.n).toBe(301);
    expect(train.y).toBeInstanceOf(Float32Array);
    expect(test.task).toBe('regression');
    const all = [...train.y, ...test.y].sort((a, b) => a - b);
    expect(all).toEqual([...d.y].sort((a, b) => a - b));
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
