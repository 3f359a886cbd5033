// The round-2 PyTorch reference cases of the Tensor-ops scope (tests/native/cases/round2.jsonl,
// format in ../shared/cases/README.md) through the JS API: prod with zeros and empty dims,
// matmul with empty and vector operands, log1p/expm1 near 0, and the x part of the
// out-of-range index requests. A whole-tensor reduction (prod_all_v) and a vector·vector
// matmul are rank-0 [] in both. keepdim=False results are compared
// after squeezing Kiln's kept dim.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { init } from 'kiln-dl';
import { caseCheck, caseGrads, caseInput, readCases } from './support/case_runner.mjs';

const cases = readCases('round2.jsonl');

let kiln;
let T;
beforeAll(async () => {
  kiln = await init();
  T = kiln.Tensor;
});
afterEach(() => {
  expect(kiln.memory().tensors).toBe(0);
});

const input = (c, name) => caseInput(T, c, name);
const check = caseCheck;
const grads = caseGrads;

function runCase(id, fn) {
  it(id, () => {
    const c = cases.get(id);
    expect(c, `case ${id} is in round2.jsonl`).toBeDefined();
    kiln.tidy(() => fn(c));
  });
}

describe('round-2 reference cases through JS', () => {
  runCase('prod_zeros_grad_and_empty', (c) => {
    const x = input(c, 'x').requireGrad();
    const v = input(c, 'v').requireGrad();
    const p = x.prodDim(1).squeezeDim(1);
    check(c, 'prod_dim1', p);
    check(c, 'grad_x__prod_dim1', grads(p, input(c, 'dy_prod_dim1'), [x])[0]);
    const pv = v.prod();
    check(c, 'prod_all_v', pv);
    check(c, 'grad_v__prod_all_v', grads(pv, undefined, [v])[0]);
    check(c, 'prod_empty_dim1', input(c, 'e').prodDim(1).squeezeDim(1));
  });

  runCase('matmul_empty_inner_and_outer_dims', (c) => {
    const [A, B, A3, B3, u, w, Pm, Q] = ['A', 'B', 'A3', 'B3', 'u', 'w', 'P', 'Q'].map((n) => input(c, n).requireGrad());
    const mm = A.matmul(B);
    check(c, 'mm_k0', mm);
    const [gA, gB] = grads(mm, input(c, 'dy_mm_k0'), [A, B]);
    check(c, 'grad_A__mm_k0', gA);
    check(c, 'grad_B__mm_k0', gB);
    const bmm = A3.matmul(B3);
    check(c, 'bmm_k0', bmm);
    const [gA3, gB3] = grads(bmm, input(c, 'dy_bmm_k0'), [A3, B3]);
    check(c, 'grad_A3__bmm_k0', gA3);
    check(c, 'grad_B3__bmm_k0', gB3);
    const dot = u.matmul(w);
    check(c, 'dot_k0', dot); // [] as PyTorch
    const [gu, gw] = grads(dot, undefined, [u, w]);
    check(c, 'grad_u__dot_k0', gu);
    check(c, 'grad_w__dot_k0', gw);
    const m0 = Pm.matmul(Q);
    check(c, 'mm_m0', m0);
    const [gP, gQ] = grads(m0, input(c, 'dy_mm_m0'), [Pm, Q]);
    check(c, 'grad_P__mm_m0', gP);
    check(c, 'grad_Q__mm_m0', gQ);
  });

  runCase('matmul_vector_operands_grad', (c) => {
    const [v, w, M, N, Tt, T2] = ['v', 'w', 'M', 'N', 'T', 'T2'].map((n) => input(c, n).requireGrad());
    const pairs = [
      ['vm', v, M, 'v', 'M'],
      ['mv', N, v, 'N', 'v'],
      ['v_batched', v, Tt, 'v', 'T'],
      ['batched_v', T2, v, 'T2', 'v'],
    ];
    for (const [name, a, b, na, nb] of pairs) {
      const out = a.matmul(b);
      check(c, name, out);
      const [ga, gb] = grads(out, input(c, `dy_${name}`), [a, b]);
      check(c, `grad_${na}__${name}`, ga);
      check(c, `grad_${nb}__${name}`, gb);
    }
    const vv = v.matmul(w);
    check(c, 'vv', vv); // [] as PyTorch
    const [gv, gw] = grads(vv, undefined, [v, w]);
    check(c, 'grad_v__vv', gv);
    check(c, 'grad_w__vv', gw);
  });

  runCase('log1p_expm1_near_zero', (c) => {
    const x = input(c, 'x').requireGrad();
    const e = input(c, 'e').requireGrad();
    const l = x.log1p();
    const m = e.expm1();
    check(c, 'log1p', l);
    check(c, 'expm1', m);
    check(c, 'grad_x__log1p', grads(l, input(c, 'dy_log1p'), [x])[0]);
    check(c, 'grad_e__expm1', grads(m, input(c, 'dy_expm1'), [e])[0]);
  });

  runCase('index_out_of_range_rejected', (c) => {
    const x = input(c, 'x');
    const idx = (rows) => T.fromData(rows, { dtype: 'int32' });
    // The x requests (the embedding ones are the layers' scope).
    const rejected = {
      'gather_dim1_index3': () => x.gather(1, idx([[3], [0]])),
      'gather_dim1_index-1': () => x.gather(1, idx([[-1], [0]])),
      'index_select_dim1_index3': () => x.select(1, idx([3])),
    };
    // Kiln's override (deliberate, tested since before this case: tests/js/tensor_shape.test.mjs,
    // tests/native/tensor/indexing_test.cpp): select (index_select) wraps a negative index,
    // as NumPy/ONNX, where PyTorch rejects it; gather rejects it as PyTorch.
    expect(c.expected['index_select_dim1_index-1'].error).toBe(true);
    expect(x.select(1, idx([-1])).toArray()).toEqual([[3], [6]]);
    for (const [name, f] of Object.entries(rejected)) {
      expect(c.expected[name].error).toBe(true);
      expect(f, name).toThrow(kiln.KilnError);
    }
    // torch.select(x, -1, -1): the last column (Kiln's slice keeps the dim: squeeze it).
    check(c, 'select_dim-1_pos-1', x.slice([null, -1]).squeezeDim(1));
    // torch.narrow(x, -1, -2, 2): a negative start counts from the end.
    check(c, 'narrow_dim-1_start-2_len2', x.narrow(-1, -2, 2));
  });
});
