// The op cases of the PyTorch reference (tests/native/cases/cases.jsonl, format in its
// README): forward values and gradients through the JS API. Layer, loss, optimizer,
// pooling and convolution cases run in the nn tests. PyTorch's scalar shape [] is the JS
// API's too (whole-tensor reductions give rank-0 tensors, as PyTorch; Kiln C++ keeps Burn's
// [1]); PyTorch's keepdim=False results are compared after removing the kept dim, as noted
// per case.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { init } from 'kiln-dl';
import { caseCheck, caseGrads, caseInput, readCases } from './support/case_runner.mjs';

const cases = readCases('cases.jsonl');

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
const gradsOf = caseGrads;

function runCase(id, fn) {
  it(id, () => {
    const c = cases.get(id);
    expect(c, `case ${id} is in cases.jsonl`).toBeDefined();
    kiln.tidy(() => {
      fn(c);
    });
  });
}

describe('PyTorch reference cases through JS', () => {
  runCase('softmax_partial_mask', (c) => {
    const x = input(c, 'x').requireGrad();
    const out = kiln.activation.softmax(x, 1);
    check(c, 'out', out);
    const [gx] = gradsOf(out, input(c, 'dy_out'), [x]);
    check(c, 'grad_x', gx);
  });

  runCase('softmax_nonfinite_rows', (c) => {
    const x = input(c, 'x');
    check(c, 'softmax', x.softmax(1));
    check(c, 'log_softmax', x.logSoftmax(1));
  });

  runCase('max_all_ties_grad', (c) => {
    const x = input(c, 'x').requireGrad();
    const out = x.max();
    check(c, 'out', out); // rank-0 [] as PyTorch
    const [gx] = gradsOf(out, undefined, [x]);
    check(c, 'grad_x', gx);
  });

  runCase('argmax_ties_first_index', (c) => {
    const xi = input(c, 'xi');
    const xf = input(c, 'xf');
    // Kiln keeps the reduced dim (argmax keepdim=True); PyTorch's case drops it.
    check(c, 'argmax_i_dim1', xi.argmax(1).squeezeDim(1));
    check(c, 'argmax_i_dim0', xi.argmax(0).squeezeDim(0));
    check(c, 'argmin_i_dim1', xi.argmin(1).squeezeDim(1));
    check(c, 'argmax_f_dim1', xf.argmax(1).squeezeDim(1));
    check(c, 'argmin_f_dim0', xf.argmin(0).squeezeDim(0));
    expect(xi.argmax(1).dtype).toBe('int32');
  });

  runCase('mean_sum_empty_axis', (c) => {
    const x = input(c, 'x');
    expect(x.shape).toEqual([2, 0]);
    check(c, 'mean_dim1', x.meanDim(1).squeezeDim(1));
    check(c, 'sum_dim1', x.sumDim(1).squeezeDim(1));
    check(c, 'mean_dim0', x.meanDim(0).squeezeDim(0));
    check(c, 'mean_all', x.mean());
  });

  runCase('abs_relu_grad_at_zero', (c) => {
    const x = input(c, 'x').requireGrad();
    const abs = x.abs();
    const relu = x.relu();
    const leaky = x.leakyRelu(0.1);
    check(c, 'abs', abs);
    check(c, 'relu', relu);
    check(c, 'leaky_relu', leaky);
    check(c, 'grad_x__abs', gradsOf(abs, input(c, 'dy_abs'), [x])[0]);
    check(c, 'grad_x__relu', gradsOf(relu, input(c, 'dy_relu'), [x])[0]);
    check(c, 'grad_x__leaky_relu', gradsOf(leaky, input(c, 'dy_leaky_relu'), [x])[0]);
  });

  runCase('sqrt_grad_at_zero', (c) => {
    const x = input(c, 'x').requireGrad();
    const out = x.sqrt();
    check(c, 'out', out);
    check(c, 'grad_x', gradsOf(out, input(c, 'dy_out'), [x])[0]);
  });

  runCase('sqrt_of_square_at_zero', (c) => {
    const x = input(c, 'x').requireGrad();
    const out = x.mul(x).sqrt();
    check(c, 'out', out);
    check(c, 'grad_x', gradsOf(out, input(c, 'dy_out'), [x])[0]);
  });

  runCase('clamp_grad_at_bounds', (c) => {
    const x = input(c, 'x').requireGrad();
    const out = x.clamp(0, 1);
    check(c, 'out', out);
    check(c, 'grad_x', gradsOf(out, input(c, 'dy_out'), [x])[0]);
  });

  runCase('sigmoid_tanh_silu_extreme', (c) => {
    const x = input(c, 'x').requireGrad();
    const A = kiln.activation;
    for (const [name, f] of [['sigmoid', A.sigmoid], ['tanh', A.tanh], ['silu', A.silu]]) {
      const out = f(x);
      check(c, name, out);
      check(c, `grad_x__${name}`, gradsOf(out, input(c, `dy_${name}`), [x])[0]);
    }
  });

  runCase('gelu_exact_and_tanh', (c) => {
    const x = input(c, 'x').requireGrad();
    const erf = kiln.activation.gelu(x);
    const tanh = kiln.activation.gelu(x, { approximate: 'tanh' });
    check(c, 'gelu_erf', erf);
    check(c, 'gelu_tanh', tanh);
    check(c, 'grad_x__gelu_erf', gradsOf(erf, input(c, 'dy_gelu_erf'), [x])[0]);
    check(c, 'grad_x__gelu_tanh', gradsOf(tanh, input(c, 'dy_gelu_tanh'), [x])[0]);
  });

  runCase('broadcast_grad_reduction', (c) => {
    const [a, b, cc, x, y, s] = ['a', 'b', 'c', 'x', 'y', 's'].map((n) => input(c, n).requireGrad());
    expect(s.shape).toEqual([]); // a true scalar in JS
    const abc = a.mul(b).add(cc);
    check(c, 'abc', abc);
    const [ga, gb, gc] = gradsOf(abc, input(c, 'dy_abc'), [a, b, cc]);
    check(c, 'grad_a__abc', ga);
    check(c, 'grad_b__abc', gb);
    check(c, 'grad_c__abc', gc);
    const xy = x.add(y);
    check(c, 'xy', xy);
    const [gx, gy] = gradsOf(xy, input(c, 'dy_xy'), [x, y]);
    check(c, 'grad_x__xy', gx);
    check(c, 'grad_y__xy', gy);
    const sx = s.mul(x);
    check(c, 'sx', sx);
    const [gx2, gs] = gradsOf(sx, input(c, 'dy_sx'), [x, s]);
    check(c, 'grad_x__sx', gx2);
    check(c, 'grad_s__sx', gs); // shape [] as PyTorch
  });

  runCase('diamond_graph_reuse', (c) => {
    const x = input(c, 'x').requireGrad();
    const a = input(c, 'a');
    const xa = x.mul(a);
    const f = x.mul(xa).add(x.mul(x).mul(a)).add(x.mul(xa));
    check(c, 'f', f);
    check(c, 'grad_x__f', gradsOf(f, input(c, 'dy_f'), [x])[0]);
    const e = x.exp();
    const g = e.pow(2).add(e);
    check(c, 'g', g);
    check(c, 'grad_x__g', gradsOf(g, input(c, 'dy_g'), [x])[0]);
  });

  runCase('where_masked_nan_branch_grad', (c) => {
    const x = input(c, 'x').requireGrad();
    const safe = T.zerosLike(x).maskWhere(x.greaterElem(0), x.sqrt());
    check(c, 'safe_sqrt', safe);
    check(c, 'grad_x', gradsOf(safe, input(c, 'dy_safe_sqrt'), [x])[0]);
  });

  runCase('int_division_floor_vs_trunc', (c) => {
    const a = input(c, 'a');
    const b = input(c, 'b');
    check(c, 'floor_div', a.div(b));
    check(c, 'trunc_div', a.divTrunc(b));
    expect(a.div(b).dtype).toBe('int32');
  });

  runCase('remainder_vs_fmod_sign', (c) => {
    const [a, b, af, bf] = ['a', 'b', 'af', 'bf'].map((n) => input(c, n));
    check(c, 'remainder_int', a.remainder(b));
    check(c, 'fmod_int', a.fmod(b));
    check(c, 'remainder_float', af.remainder(bf));
    check(c, 'fmod_float', af.fmod(bf));
  });

  runCase('slice_steps_positive_and_negative', (c) => {
    const v = input(c, 'v').requireGrad();
    const m = input(c, 'm').requireGrad();
    const w = input(c, 'w').requireGrad();
    const vs = v.slice([[1, 8, 3]]);
    const ms = m.slice([null, [0, 5, 2]]);
    const { start, end, step } = c.params.w_negstep;
    const ws = w.slice([[start, end, step]]);
    check(c, 'v_slice', vs);
    check(c, 'm_slice', ms);
    check(c, 'w_negstep', ws);
    check(c, 'grad_v__v_slice', gradsOf(vs, input(c, 'dy_v_slice'), [v])[0]);
    check(c, 'grad_m__m_slice', gradsOf(ms, input(c, 'dy_m_slice'), [m])[0]);
    check(c, 'grad_w__w_negstep', gradsOf(ws, input(c, 'dy_w_negstep'), [w])[0]);
  });

  runCase('reshape_infer_dim', (c) => {
    const x = input(c, 'x').requireGrad();
    const xr = x.reshape([-1, 6]);
    check(c, 'x_r', xr);
    check(c, 'e_r', input(c, 'e').reshape([3, -1]));
    check(c, 'grad_x', gradsOf(xr, input(c, 'dy_x_r'), [x])[0]);
  });

  runCase('cat_stack_with_empty', (c) => {
    const [a, e, b, a0, a1] = ['a', 'e', 'b', 'a0', 'a1'].map((n) => input(c, n).requireGrad());
    const cat = T.cat([a, e, b], 1);
    check(c, 'cat', cat);
    const [ga, ge, gb] = gradsOf(cat, input(c, 'dy_cat'), [a, e, b]);
    check(c, 'grad_a__cat', ga);
    check(c, 'grad_b__cat', gb);
    check(c, 'grad_e__cat', ge); // [2, 0], as PyTorch
    const stack = T.stack([a0, a1], 1);
    check(c, 'stack', stack);
    const [g0, g1] = gradsOf(stack, input(c, 'dy_stack'), [a0, a1]);
    check(c, 'grad_a0__stack', g0);
    check(c, 'grad_a1__stack', g1);
  });
});
