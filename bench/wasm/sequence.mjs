// WebAssembly side of the sequence-layer benchmark (issue 19), in Node: the same steps as
// bench/native/bench_sequence.cpp and bench/native/torch_sequence.py, through the package's
// JS API (one engine call per layer forward; the LSTM's time loop runs inside WebAssembly).
// One thread: the single-threaded build (init({threads: false})), stated in every line:
//
//   wasm model=lstm threads=1 step_ms=123.456   (median of --steps steps after 2 warm-ups)
//
//   lstm:        kiln.nn.lstm({dInput: 128, dHidden: 128, bias: true}) on x [32, 64, 128]
//   transformer: kiln.nn.transformerEncoder({dModel: 128, dFf: 512, nHeads: 4, nLayers: 2,
//                dropout: 0, activation: 'relu'}) on x [32, 64, 128]
// One step = forward, then backward of sum(output · dy) (gradients of x and every parameter).
//
//   node bench/wasm/sequence.mjs [--steps 10]
import { performance } from 'node:perf_hooks';

import { init } from 'kiln-dl';

const args = process.argv.slice(2);
const at = args.indexOf('--steps');
const steps = at >= 0 ? Number(args[at + 1]) : 10;

const kiln = await init({ engine: 'full', threads: false }); // LSTM and attention layers: full engine
const B = 32, T = 64, D = 128;
const models = {
  lstm: kiln.nn.lstm({ dInput: D, dHidden: D, bias: true }, { seed: 0 }),
  transformer: kiln.nn.transformerEncoder({ dModel: D, dFf: 4 * D, nHeads: 4, nLayers: 2, dropout: 0, activation: 'relu' }, { seed: 0 }),
};
kiln.seed(1);
const x0 = kiln.Tensor.random([B, T, D], { uniform: [-1, 1] });
const dy = kiln.Tensor.random([B, T, D], { uniform: [-1, 1] });

for (const [name, model] of Object.entries(models)) {
  const step = () => kiln.tidy(() => {
    const x = x0.clone().requireGrad();
    const grads = model.forward(x).mul(dy).sum().backward();
    x.grad(grads).dataSync();  // wait for nothing: the engine is synchronous; read one result
    grads.dispose();
  });
  for (let i = 0; i < 2; i++) step();
  const times = [];
  for (let i = 0; i < steps; i++) {
    const t0 = performance.now();
    step();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  console.log(`wasm model=${name} threads=1 step_ms=${times[Math.floor(times.length / 2)].toFixed(3)}`);
  model.dispose();
}
