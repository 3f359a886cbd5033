// A TypeScript consumer of kiln-dl: must type-check with `tsc --noEmit --strict`
// (tests/js/types.test.mjs). The @ts-expect-error lines must stay errors: if the
// declarations became too loose, tsc would report them as unused.
import { init, KilnError } from 'kiln-dl';
import type { DType, ErrorCode, Gradients, Kiln, MemoryInfo, NestedData, Tensor } from 'kiln-dl';

export async function main(): Promise<number> {
  const kiln: Kiln = await init();
  const { Tensor: T } = kiln;

  const a: Tensor = T.fromData([[1, 2], [3, 4]]);
  const i = T.fromData(new Int32Array([1, 2]), { shape: [2], dtype: 'int32' });
  const dtype: DType = i.dtype;
  const shape: number[] = a.shape;
  const z = T.zeros([2, 3], { dtype: 'float32' });
  const r = T.random([2, 2], { normal: [0, 1] }, { seed: 1 });
  const u = T.random([2], { uniform: [0, 1] });
  const ar = T.arange(0, 10, 2);
  const e = T.eye(3);
  const s = T.cat([a, a], 0).add(1).mul(T.ones([1, 2])).sumDim(1).reshape([-1]);
  const [values, indices] = a.maxDimWithIndices(1);
  const sl = a.slice([[0, 1], [-1, null]]).slice([0, null]);
  const st = T.stack([a, a], 0).permute([2, 1, 0]).flatten(0, 1).squeeze().unsqueezeDim(0);
  const flat: Float32Array | Int32Array | Uint8Array = a.dataSync();
  const nested: NestedData = a.toArray();
  const v: number | boolean = a.sum().item();
  const text: string = a.toString({ precision: 2 });
  const soft = kiln.activation.softmax(a, 1);
  const g = kiln.activation.gelu(a, { approximate: 'tanh' });

  // autodiff
  const w = T.fromData([0.5, -1]).requireGrad();
  const loss = a.matmul(w).pow(2).sum();
  const grads: Gradients = loss.backward();
  const gw: Tensor | undefined = w.grad(grads);
  const d = kiln.noGrad(() => w.mul(2).detach());
  grads.dispose();

  // memory
  const kept = kiln.tidy(() => [a.add(1), { t: a.mul(2) }] as const);
  kiln.dispose(kept);
  const m: MemoryInfo = kiln.memory();
  const n: number = m.bytes + m.tensors + m.heapBytes;
  {
    using scoped = T.ones([2]);
    scoped.neg();
  }

  // errors
  try {
    a.matmul(T.zeros([3, 3]));
  } catch (err) {
    if (err instanceof KilnError) {
      const code: ErrorCode = err.code;
      if (code.length + err.message.length === 0) throw err;
    }
  }
  if (!(a instanceof kiln.Tensor)) throw new Error('not a Tensor');
  const info = kiln.backendInfo();
  const threads: number = info.threads + info.maxThreads;
  const build: 'simd' | 'simd-threads' | 'simd-relaxed' | 'simd-threads-relaxed' | 'webgpu' = info.build;
  const buildReason: string = info.buildReason;
  kiln.setNumThreads(1);
  const threaded: Kiln = await init({ threads: 'auto', numThreads: 2 });
  await init({ threads: false });
  await init({ threads: false, relaxedSimd: false });
  // @ts-expect-error relaxedSimd is true, false or 'auto'
  await init({ relaxedSimd: 'yes' });
  // @ts-expect-error threads is true, false or 'auto'
  await init({ threads: 'yes' });
  // @ts-expect-error numThreads is a number
  await init({ numThreads: '2' });
  // @ts-expect-error the build is one of three names
  const wrongBuild: 'wasm' = info.build;

  // @ts-expect-error a shape is an array of numbers
  T.zeros('2');
  // @ts-expect-error a string is not a tensor operand
  a.add('x');
  // @ts-expect-error sumDim needs a dim
  a.sumDim();
  // @ts-expect-error dtype names are float32 | int32 | bool
  T.ones([1], { dtype: 'float64' });
  // @ts-expect-error Gradients are not tensors
  w.grad(a);

  // The issue-15 ops (bindings/js/tensor/ops_ext.ts).
  const n2: Tensor = a.norm();
  const n1: Tensor = a.norm(1, 0, { keepDim: false });
  const ninf: Tensor = a.norm(Infinity, [0, 1]);
  const sd: Tensor = a.std(1, { correction: 0, keepDim: true });
  const sdu: Tensor = a.std(null, false);
  const vr: Tensor = a.var(0, { correction: 2 });
  const vrOld: Tensor = a.var(0, true);
  const am: Tensor = a.amax(1);
  const an: Tensor = a.amin([0, 1], { keepDim: false });
  const pd: Tensor = a.pad([1, 1, 0, 2], { mode: 'reflect', value: 0 });
  const tl: Tensor = a.tril(-1);
  const tu: Tensor = a.triu();
  const cs: Tensor = a.cumsum(0);
  const ls: Tensor = T.linspace(0, 1, 5);
  const es: Tensor = T.einsum('ij,jk->ik', a, a);
  const es1: Tensor = T.einsum('ij->', a);
  const retained: Gradients = a.matmul(w).sum().backward({ retainGraph: true });
  retained.dispose();
  // @ts-expect-error pad modes are constant | reflect | replicate | circular
  a.pad([1, 1], { mode: 'wrap' });
  // @ts-expect-error p is a number
  a.norm('fro');
  // @ts-expect-error retainGraph is a boolean
  loss.backward({ retainGraph: 1 });
  kiln.dispose([n2, n1, ninf, sd, sdu, vr, vrOld, am, an, pd, tl, tu, cs, ls, es, es1]);

  kiln.dispose([a, i, z, r, u, ar, e, s, values, indices, sl, st, soft, g, w, loss, gw, d]);
  return dtype.length + shape.length + flat.length + String(nested).length + Number(v) + text.length + n + threads +
    build.length + buildReason.length + threaded.backendInfo().threads + wrongBuild.length;
}
