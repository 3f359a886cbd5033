// What the browser benchmarks share (bench/browser/worker.js: one MNIST epoch on the CPU;
// bench/webgpu/worker.js: the WebGPU page): the anchor models as a Kiln spec and as TF.js
// core ops, and fetching the MNIST files the pages serve under /mnist/.
import { parseIdx, MNIST_FILES } from '../../web/src/mnist.js';

export async function fetchBytes(url) {
  const r = await fetch(url);
  if (!r.ok) throw new Error(`${url}: ${r.status}`);
  return new Uint8Array(await r.arrayBuffer());
}

/**
 * The four MNIST files under `base` (a URL ending in /): the raw IDX bytes and the parsed
 * pixels and labels of the training and test sets.
 */
export async function loadMnist(base) {
  const [trImg, trLbl, teImg, teLbl] = await Promise.all(
    [MNIST_FILES.trainImages, MNIST_FILES.trainLabels, MNIST_FILES.testImages, MNIST_FILES.testLabels].map((f) => fetchBytes(base + f)),
  );
  return {
    trImg, trLbl, teImg, teLbl,
    pixels: parseIdx(trImg, 3).data, labels: parseIdx(trLbl, 1).data,
    testPixels: parseIdx(teImg, 3).data, testLabels: parseIdx(teLbl, 1).data,
  };
}

/** The anchor models (bench/RESULTS.md, performance-anchors.md) as kiln.nn.sequential specs. */
export const SPECS = {
  mlp: {
    layers: [
      { type: 'linear', dInput: 784, dOutput: 128, bias: true },
      { type: 'relu' },
      { type: 'linear', dInput: 128, dOutput: 64, bias: true },
      { type: 'relu' },
      { type: 'linear', dInput: 64, dOutput: 10, bias: true },
    ],
  },
  cnn: {
    layers: [
      { type: 'reshape', shape: [1, 28, 28] },
      { type: 'conv2d', channels: [1, 8], kernelSize: [3, 3], stride: [1, 1], padding: 'valid' },
      { type: 'relu' },
      { type: 'maxPool2d', kernelSize: [2, 2] },
      { type: 'conv2d', channels: [8, 16], kernelSize: [3, 3], stride: [1, 1], padding: 'valid' },
      { type: 'relu' },
      { type: 'maxPool2d', kernelSize: [2, 2] },
      { type: 'flatten' },
      { type: 'linear', dInput: 400, dOutput: 10, bias: true },
    ],
  },
};

/**
 * The same models written with TF.js core ops (`tf`: @tensorflow/tfjs-core), parameters
 * initialised as PyTorch's defaults (uniform ±1/sqrt(fan_in)).
 * @returns {{params: object, forward: (x) => object, numParams: number}}
 */
export function tfjsModel(tf, model) {
  const uni = (shape, fanIn) => tf.variable(tf.randomUniform(shape, -1 / Math.sqrt(fanIn), 1 / Math.sqrt(fanIn), 'float32', 1));
  let params;
  let forward;
  if (model === 'mlp') {
    params = { w1: uni([784, 128], 784), b1: uni([128], 784), w2: uni([128, 64], 128), b2: uni([64], 128), w3: uni([64, 10], 64), b3: uni([10], 64) };
    forward = (x) => {
      const h1 = tf.relu(tf.add(tf.matMul(x, params.w1), params.b1));
      const h2 = tf.relu(tf.add(tf.matMul(h1, params.w2), params.b2));
      return tf.add(tf.matMul(h2, params.w3), params.b3);
    };
  } else {
    params = { c1: uni([3, 3, 1, 8], 9), cb1: uni([8], 9), c2: uni([3, 3, 8, 16], 72), cb2: uni([16], 72), w: uni([400, 10], 400), b: uni([10], 400) };
    forward = (x) => {
      let h = tf.reshape(x, [-1, 28, 28, 1]);
      h = tf.maxPool(tf.relu(tf.add(tf.conv2d(h, params.c1, 1, 'valid'), params.cb1)), 2, 2, 'valid');
      h = tf.maxPool(tf.relu(tf.add(tf.conv2d(h, params.c2, 1, 'valid'), params.cb2)), 2, 2, 'valid');
      return tf.add(tf.matMul(tf.reshape(h, [-1, 400]), params.w), params.b);
    };
  }
  const numParams = Object.values(params).reduce((s, v) => s + v.size, 0);
  return { params, forward, numParams };
}

/** Index of the largest of the 10 scores of each row: how many match `labels`. */
export function countCorrect(scores, labels, offset = 0) {
  let correct = 0;
  const n = scores.length / 10;
  for (let i = 0; i < n; i++) {
    let best = 0;
    for (let c = 1; c < 10; c++) if (scores[i * 10 + c] > scores[i * 10 + best]) best = c;
    if (best === labels[offset + i]) correct++;
  }
  return correct;
}
