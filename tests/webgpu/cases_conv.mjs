// Cases of the convolutions (engine/src/wgpu/conv_ops.cpp; ops in ops_conv.cpp). Each
// geometry below yields its forward case and, where the op exists, the x- and weight-gradient
// cases with an output_grad of the forward's output shape.
//
// Tolerance: the Cpu sums with im2col + a blocked GEMM (or its direct kernels for small
// stride-1 layers), the Wgpu kernels tap by tap in im2col row order; both round in f32, so
// results differ by rounding only, growing with the length K of each sum (about
// eps·sqrt(K)·|terms| in practice, with cancellation making it an absolute rather than a
// relative error). tolFor(K) gives rel 1e-5 and abs 1e-6·K, K being the sum's length:
// Cg·taps (forward), Og·taps (x gradient), batch·output positions (weight gradient).
import { SPECIAL, tensor } from './support.mjs';

const tolFor = (k) => ({ rel: 1e-5, abs: 1e-6 * Math.max(k, 1) });
const prod = (a) => a.reduce((x, y) => x * y, 1);
const f32 = (shape, seed) => tensor(shape, 'f32', seed);

/** Output size of a convolution along one dim (PyTorch's formula). */
function convOut(size, k, s, p, pe, d) {
  return Math.floor((size + p + pe - d * (k - 1) - 1) / s) + 1;
}
/** Output size of a transposed convolution along one dim. */
function transposeOut(size, k, s, p, po, d) {
  return (size - 1) * s - 2 * p + d * (k - 1) + po + 1;
}

function opt(o, key, n, fallback) {
  return o[key] ?? Array(n).fill(fallback);
}

/** Forward, x-gradient and weight-gradient cases of a convolution geometry. */
function convCases({ name, x, w, bias = true, attrs = {}, seed = 1, backward = true }) {
  const n = x.length - 2;
  const stride = opt(attrs, 'stride', n, 1);
  const padding = opt(attrs, 'padding', n, 0);
  const paddingEnd = attrs.padding_end ?? padding;
  const dilation = opt(attrs, 'dilation', n, 1);
  const groups = attrs.groups ?? 1;
  const spatial = x.slice(2).map((size, d) => convOut(size, w[d + 2], stride[d], padding[d], paddingEnd[d], dilation[d]));
  const out = [x[0], w[0], ...spatial];
  const taps = prod(w.slice(2));
  const op = `conv${n}d`;
  const inputs = [f32(x, seed), f32(w, seed + 1)];
  if (bias) inputs.push(f32([w[0]], seed + 2));
  const cases = [{ name: `${op} ${name}`, op, inputs, attrs, tol: tolFor(w[1] * taps) }];
  if (backward && n > 1) {
    const grad = f32(out, seed + 3);
    cases.push({
      name: `${op}_x_backward ${name}`, op: `${op}_x_backward`, inputs: [f32(w, seed + 1), grad],
      attrs: { ...attrs, x_shape: x }, tol: tolFor((w[0] / groups) * taps),
    });
    cases.push({
      name: `${op}_weight_backward ${name}`, op: `${op}_weight_backward`, inputs: [f32(x, seed), grad],
      attrs: { ...attrs, weight_shape: w }, tol: tolFor(x[0] * prod(spatial)),
    });
  }
  return cases;
}

/** Forward, x-gradient and weight-gradient cases of a transposed convolution geometry. */
function transposeCases({ name, x, w, bias = true, attrs = {}, seed = 1, backward = true }) {
  const n = x.length - 2;
  const stride = opt(attrs, 'stride', n, 1);
  const padding = opt(attrs, 'padding', n, 0);
  const paddingOut = opt(attrs, 'padding_out', n, 0);
  const dilation = opt(attrs, 'dilation', n, 1);
  const groups = attrs.groups ?? 1;
  const spatial = x.slice(2).map((size, d) => transposeOut(size, w[d + 2], stride[d], padding[d], paddingOut[d], dilation[d]));
  const out = [x[0], w[1] * groups, ...spatial];
  const taps = prod(w.slice(2));
  const op = `conv_transpose${n}d`;
  const inputs = [f32(x, seed), f32(w, seed + 1)];
  if (bias) inputs.push(f32([w[1] * groups], seed + 2));
  const cases = [{ name: `${op} ${name}`, op, inputs, attrs, tol: tolFor((w[0] / groups) * taps) }];
  if (backward && n > 1) {
    const grad = f32(out, seed + 3);
    cases.push({
      name: `${op}_x_backward ${name}`, op: `${op}_x_backward`, inputs: [f32(w, seed + 1), grad],
      attrs: { ...attrs, x_shape: x }, tol: tolFor(w[1] * taps),
    });
    cases.push({
      name: `${op}_weight_backward ${name}`, op: `${op}_weight_backward`, inputs: [f32(x, seed), grad],
      attrs: { ...attrs, weight_shape: w }, tol: tolFor(x[0] * prod(x.slice(2))),
    });
  }
  return cases;
}

/** `t` with `values` written at the given flat positions. */
function withValues(t, positions, values) {
  const data = t.data.slice();
  positions.forEach((p, i) => { data[p] = values[i % values.length]; });
  return { ...t, data };
}

// SPECIAL without the two near-overflow values (a sum of two of them overflows in one order
// and not in another) and spread so that no window sees both infinities.
const SPECIALS = SPECIAL.filter((v) => Math.abs(v) !== 3.4e38);

export const cases = [
  // ---- conv2d and its gradients: the Cpu's direct kernels (stride 1, no padding, one group),
  // its im2col + GEMM path (everything else) and its 1x1 identity path
  ...convCases({ name: 'direct path 3x3', x: [2, 3, 7, 6], w: [4, 3, 3, 3], seed: 1 }),
  ...convCases({ name: 'stride 2 padding 1', x: [2, 3, 8, 7], w: [5, 3, 3, 3], attrs: { stride: [2, 2], padding: [1, 1] }, seed: 11 }),
  ...convCases({ name: 'stride 3 dilation 2 uneven padding', x: [1, 2, 11, 9], w: [3, 2, 3, 2], attrs: { stride: [3, 2], padding: [2, 1], padding_end: [0, 3], dilation: [2, 3] }, seed: 21 }),
  ...convCases({ name: 'groups 2', x: [2, 4, 6, 6], w: [6, 2, 3, 3], attrs: { groups: 2, padding: [1, 1] }, seed: 31 }),
  ...convCases({ name: 'depthwise (groups = channels)', x: [2, 4, 5, 5], w: [8, 1, 3, 3], attrs: { groups: 4 }, seed: 41 }),
  ...convCases({ name: '1x1 kernel (identity columns)', x: [2, 5, 4, 3], w: [3, 5, 1, 1], seed: 51 }),
  ...convCases({ name: 'no bias, stride larger than the kernel', x: [1, 3, 9, 9], w: [2, 3, 2, 2], bias: false, attrs: { stride: [4, 3] }, seed: 61 }),
  ...convCases({ name: 'kernel as large as the padded input', x: [2, 2, 3, 4], w: [3, 2, 5, 4], attrs: { padding: [1, 0] }, seed: 71 }),
  ...convCases({ name: 'MNIST-like 28x28, 5x5, 8 channels', x: [4, 1, 28, 28], w: [8, 1, 5, 5], seed: 81 }),
  // 2·8·64·64 = 65,536 outputs: 256 workgroups of 256, each output 72 products
  ...convCases({ name: 'large (65,536 outputs)', x: [2, 8, 64, 64], w: [8, 8, 3, 3], attrs: { padding: [1, 1] }, seed: 91, backward: false }),
  ...convCases({ name: 'empty batch', x: [0, 3, 5, 5], w: [4, 3, 3, 3], seed: 101 }),
  ...convCases({ name: 'no input channels (bias only)', x: [2, 0, 5, 5], w: [4, 0, 3, 3], seed: 111 }),
  ...convCases({ name: 'no output channels', x: [2, 3, 5, 5], w: [0, 3, 3, 3], seed: 121 }),
  { name: 'conv2d x used as its own weight', op: 'conv2d_self', inputs: [f32([3, 3, 3, 3], 131)], tol: tolFor(27) },
  { name: 'conv2d_weight_backward x used as output_grad', op: 'conv2d_weight_backward_self', inputs: [f32([2, 2, 3, 3], 132)], attrs: { weight_shape: [2, 2, 1, 1] }, tol: tolFor(18) },

  // special values: nan and infinities propagate to the outputs that read them. Not tried:
  // non-finite weights in the x gradient and non-finite x in the weight gradient of an
  // unpadded stride-1 layer, where the Cpu's direct kernels give nan in entries its GEMM path
  // gives finite (engine/src/wgpu/conv_ops.cpp's file comment): hence the padding below.
  { name: 'conv2d special x (direct path)', op: 'conv2d', inputs: [withValues(f32([1, 2, 6, 6], 141), [0, 7, 20, 40, 55, 66], SPECIALS), f32([3, 2, 3, 3], 142)] },
  { name: 'conv2d special x (padded, GEMM path)', op: 'conv2d', inputs: [withValues(f32([1, 2, 6, 6], 143), [0, 7, 20, 40, 55, 66], SPECIALS.slice(4)), f32([3, 2, 3, 3], 144), f32([3], 145)], attrs: { padding: [1, 1] } },
  // an infinite weight times the padding's zeros is nan, as in the Cpu's im2col + GEMM
  { name: 'conv2d infinite and nan weights with padding', op: 'conv2d', inputs: [f32([1, 2, 4, 4], 146), withValues(f32([2, 2, 3, 3], 147), [0, 22], [Infinity, NaN])], attrs: { padding: [1, 1] } },
  { name: 'conv2d_x_backward special output_grad', op: 'conv2d_x_backward', inputs: [f32([3, 2, 3, 3], 148), withValues(f32([2, 3, 4, 4], 149), [1, 17, 40, 70, 90], SPECIALS.slice(6))], attrs: { x_shape: [2, 2, 6, 6] } },
  { name: 'conv2d_x_backward special output_grad (strided, GEMM path)', op: 'conv2d_x_backward', inputs: [f32([3, 2, 3, 3], 150), withValues(f32([1, 3, 3, 3], 151), [1, 13, 22], SPECIALS.slice(8))], attrs: { x_shape: [1, 2, 6, 6], stride: [2, 2], padding: [1, 1] } },
  { name: 'conv2d_weight_backward special x (padded)', op: 'conv2d_weight_backward', inputs: [withValues(f32([2, 2, 5, 5], 152), [3, 30, 77], SPECIALS.slice(8)), f32([2, 3, 5, 5], 153)], attrs: { weight_shape: [3, 2, 3, 3], padding: [1, 1] } },
  { name: 'conv2d_weight_backward special output_grad', op: 'conv2d_weight_backward', inputs: [f32([2, 2, 5, 5], 154), withValues(f32([2, 3, 3, 3], 155), [2, 30], [NaN, Infinity])], attrs: { weight_shape: [3, 2, 3, 3] } },

  // argument errors: both backends throw the same code and message
  { name: 'conv2d x of rank 3', op: 'conv2d', inputs: [f32([3, 5, 5], 1), f32([2, 3, 3, 3], 2)], error: 'Rank' },
  { name: 'conv2d weight of rank 3', op: 'conv2d', inputs: [f32([1, 3, 5, 5], 1), f32([3, 3, 3], 2)], error: 'Rank' },
  { name: 'conv2d bias of rank 2', op: 'conv2d', inputs: [f32([1, 3, 5, 5], 1), f32([2, 3, 3, 3], 2), f32([2, 1], 3)], error: 'Rank' },
  { name: 'conv2d i32 x', op: 'conv2d', inputs: [tensor([1, 3, 5, 5], 'i32', 1), f32([2, 3, 3, 3], 2)], error: 'DType' },
  { name: 'conv2d bool bias', op: 'conv2d', inputs: [f32([1, 3, 5, 5], 1), f32([2, 3, 3, 3], 2), tensor([2], 'bool', 3)], error: 'DType' },
  { name: 'conv2d empty kernel', op: 'conv2d', inputs: [f32([1, 3, 5, 5], 1), f32([2, 3, 0, 3], 2)], error: 'Shape' },
  { name: 'conv2d stride 0', op: 'conv2d', inputs: [f32([1, 3, 5, 5], 1), f32([2, 3, 3, 3], 2)], attrs: { stride: [1, 0] }, error: 'Config' },
  { name: 'conv2d dilation 0', op: 'conv2d', inputs: [f32([1, 3, 5, 5], 1), f32([2, 3, 3, 3], 2)], attrs: { dilation: [0, 1] }, error: 'Config' },
  { name: 'conv2d negative padding', op: 'conv2d', inputs: [f32([1, 3, 5, 5], 1), f32([2, 3, 3, 3], 2)], attrs: { padding: [-1, 0] }, error: 'Config' },
  { name: 'conv2d negative padding_end', op: 'conv2d', inputs: [f32([1, 3, 5, 5], 1), f32([2, 3, 3, 3], 2)], attrs: { padding_end: [0, -2] }, error: 'Config' },
  { name: 'conv2d groups 0', op: 'conv2d', inputs: [f32([1, 3, 5, 5], 1), f32([2, 3, 3, 3], 2)], attrs: { groups: 0 }, error: 'Config' },
  { name: 'conv2d channels differ', op: 'conv2d', inputs: [f32([1, 4, 5, 5], 1), f32([2, 3, 3, 3], 2)], error: 'Shape' },
  { name: 'conv2d channels not weight dim 1 · groups', op: 'conv2d', inputs: [f32([1, 4, 5, 5], 1), f32([2, 4, 3, 3], 2)], attrs: { groups: 2 }, error: 'Shape' },
  { name: 'conv2d output channels not divisible by groups', op: 'conv2d', inputs: [f32([1, 4, 5, 5], 1), f32([3, 2, 3, 3], 2)], attrs: { groups: 2 }, error: 'Shape' },
  { name: 'conv2d bias not [channels_out]', op: 'conv2d', inputs: [f32([1, 3, 5, 5], 1), f32([2, 3, 3, 3], 2), f32([3], 3)], error: 'Shape' },
  { name: 'conv2d dilated kernel larger than the padded input', op: 'conv2d', inputs: [f32([1, 3, 5, 5], 1), f32([2, 3, 3, 3], 2)], attrs: { dilation: [3, 1] }, error: 'Shape' },
  { name: 'conv2d output too large (Limit)', op: 'conv2d', inputs: [f32([1, 1, 2, 2], 1), f32([1, 1, 1, 1], 2)], attrs: { padding: [40000, 40000] }, error: 'Limit' },

  // ---- conv1d (conv2d over a unit height)
  ...convCases({ name: 'basic', x: [2, 3, 12], w: [4, 3, 3], seed: 201 }),
  ...convCases({ name: 'stride 2 padding 2 dilation 2 groups 3', x: [2, 6, 15], w: [9, 2, 4], attrs: { stride: [2], padding: [2], padding_end: [1], dilation: [2], groups: 3 }, seed: 211 }),
  ...convCases({ name: 'empty batch', x: [0, 3, 12], w: [4, 3, 3], seed: 221 }),
  { name: 'conv1d special x', op: 'conv1d', inputs: [withValues(f32([1, 2, 16], 231), [0, 5, 12, 20, 27], SPECIALS), f32([2, 2, 3], 232)], attrs: { padding: [1] } },
  { name: 'conv1d x of rank 4', op: 'conv1d', inputs: [f32([1, 3, 5, 5], 1), f32([2, 3, 3], 2)], error: 'Rank' },
  { name: 'conv1d kernel larger than the input', op: 'conv1d', inputs: [f32([1, 3, 4], 1), f32([2, 3, 5], 2)], error: 'Shape' },

  // ---- conv_bias_backward
  { name: 'conv_bias_backward [2, 4, 3, 3]', op: 'conv_bias_backward', inputs: [f32([2, 4, 3, 3], 301)] },
  { name: 'conv_bias_backward rank 3', op: 'conv_bias_backward', inputs: [f32([3, 5, 7], 302)] },
  { name: 'conv_bias_backward rank 5', op: 'conv_bias_backward', inputs: [f32([2, 3, 2, 3, 4], 303)] },
  { name: 'conv_bias_backward empty batch (zeros)', op: 'conv_bias_backward', inputs: [f32([0, 4, 3, 3], 304)] },
  { name: 'conv_bias_backward no channels', op: 'conv_bias_backward', inputs: [f32([2, 0, 3], 305)] },
  // 4·200·200 = 160,000 terms per channel, compensated in f32 (the Cpu sums in double)
  { name: 'conv_bias_backward 160,000 terms per channel', op: 'conv_bias_backward', inputs: [f32([4, 3, 200, 200], 306)] },
  { name: 'conv_bias_backward special values', op: 'conv_bias_backward', inputs: [{ shape: [2, 6, 2], dtype: 'f32', data: [0, -0, 1, NaN, Infinity, 2, -Infinity, -1, Infinity, -Infinity, 1e-38, 0.5, 7, 8, 9, 10, Infinity, 3, -3, 1, 2, 3, 4, 5] }] },

  // ---- transposed 2-D
  ...transposeCases({ name: 'basic', x: [2, 3, 4, 5], w: [3, 2, 3, 3], seed: 401 }),
  ...transposeCases({ name: 'stride 2 padding 1 padding_out 1', x: [2, 3, 4, 4], w: [3, 4, 3, 3], attrs: { stride: [2, 2], padding: [1, 1], padding_out: [1, 1] }, seed: 411 }),
  ...transposeCases({ name: 'stride 3 dilation 2 groups 2', x: [1, 4, 3, 5], w: [4, 3, 2, 3], attrs: { stride: [3, 2], padding: [1, 2], padding_out: [1, 0], dilation: [2, 2], groups: 2 }, seed: 421 }),
  ...transposeCases({ name: 'no bias 1x1', x: [2, 5, 3, 3], w: [5, 2, 1, 1], bias: false, seed: 431 }),
  ...transposeCases({ name: 'no input channels (bias only)', x: [2, 0, 3, 3], w: [0, 4, 3, 3], seed: 441 }),
  ...transposeCases({ name: 'empty input plane', x: [1, 2, 0, 3], w: [2, 3, 3, 3], seed: 451 }),
  ...transposeCases({ name: 'empty batch', x: [0, 2, 3, 3], w: [2, 3, 3, 3], seed: 461 }),
  { name: 'conv_transpose2d special x', op: 'conv_transpose2d', inputs: [withValues(f32([1, 2, 4, 4], 471), [0, 9, 18, 27], SPECIALS.slice(6)), f32([2, 2, 3, 3], 472)], attrs: { stride: [2, 2] } },
  { name: 'conv_transpose2d padding_out >= stride and dilation', op: 'conv_transpose2d', inputs: [f32([1, 2, 4, 4], 1), f32([2, 2, 3, 3], 2)], attrs: { stride: [2, 2], padding_out: [2, 0] }, error: 'Config' },
  { name: 'conv_transpose2d channels differ', op: 'conv_transpose2d', inputs: [f32([1, 3, 4, 4], 1), f32([2, 2, 3, 3], 2)], error: 'Shape' },
  { name: 'conv_transpose2d channels not divisible by groups', op: 'conv_transpose2d', inputs: [f32([1, 3, 4, 4], 1), f32([3, 2, 3, 3], 2)], attrs: { groups: 2 }, error: 'Shape' },
  { name: 'conv_transpose2d bias not [channels_out]', op: 'conv_transpose2d', inputs: [f32([1, 2, 4, 4], 1), f32([2, 3, 3, 3], 2), f32([2], 3)], error: 'Shape' },
  { name: 'conv_transpose2d output size < 1', op: 'conv_transpose2d', inputs: [f32([1, 2, 2, 2], 1), f32([2, 3, 1, 1], 2)], attrs: { padding: [1, 1] }, error: 'Shape' },
  { name: 'conv_transpose2d i32 weight', op: 'conv_transpose2d', inputs: [f32([1, 2, 4, 4], 1), tensor([2, 3, 3, 3], 'i32', 2)], error: 'DType' },
  { name: 'conv_transpose2d groups 0', op: 'conv_transpose2d', inputs: [f32([1, 2, 4, 4], 1), f32([2, 3, 3, 3], 2)], attrs: { groups: 0 }, error: 'Config' },

  // ---- transposed 1-D
  ...transposeCases({ name: 'basic', x: [2, 3, 7], w: [3, 2, 3], seed: 501 }),
  ...transposeCases({ name: 'stride 3 padding 1 padding_out 2 dilation 2 groups 3', x: [2, 6, 5], w: [6, 1, 4], attrs: { stride: [3], padding: [1], padding_out: [2], dilation: [2], groups: 3 }, seed: 511 }),
  { name: 'conv_transpose1d x of rank 4', op: 'conv_transpose1d', inputs: [f32([1, 2, 4, 4], 1), f32([2, 3, 3], 2)], error: 'Rank' },

  // ---- 3-D
  ...convCases({ name: 'basic', x: [2, 2, 4, 5, 4], w: [3, 2, 2, 3, 2], seed: 601 }),
  ...convCases({ name: 'stride padding dilation groups', x: [1, 4, 6, 5, 7], w: [4, 2, 3, 2, 3], attrs: { stride: [2, 1, 2], padding: [1, 0, 2], padding_end: [0, 1, 1], dilation: [2, 1, 1], groups: 2 }, seed: 611 }),
  ...convCases({ name: 'empty batch', x: [0, 2, 3, 3, 3], w: [2, 2, 2, 2, 2], seed: 621 }),
  { name: 'conv3d special x', op: 'conv3d', inputs: [withValues(f32([1, 1, 4, 4, 4], 631), [0, 21, 42, 63], SPECIALS.slice(8)), f32([2, 1, 2, 2, 2], 632)], attrs: { padding: [1, 0, 1] } },
  { name: 'conv3d x of rank 4', op: 'conv3d', inputs: [f32([1, 2, 4, 4], 1), f32([2, 2, 2, 2, 2], 2)], error: 'Rank' },
  { name: 'conv3d stride 0', op: 'conv3d', inputs: [f32([1, 2, 4, 4, 4], 1), f32([2, 2, 2, 2, 2], 2)], attrs: { stride: [1, 0, 1] }, error: 'Config' },
  ...transposeCases({ name: 'basic', x: [2, 2, 3, 2, 3], w: [2, 3, 2, 2, 3], seed: 701 }),
  ...transposeCases({ name: 'stride padding padding_out dilation groups', x: [1, 4, 3, 2, 3], w: [4, 1, 2, 3, 2], attrs: { stride: [2, 3, 1], padding: [1, 1, 0], padding_out: [1, 2, 0], dilation: [1, 1, 2], groups: 2 }, seed: 711 }),
  { name: 'conv_transpose3d padding_out too large', op: 'conv_transpose3d', inputs: [f32([1, 2, 3, 3, 3], 1), f32([2, 2, 2, 2, 2], 2)], attrs: { padding_out: [0, 1, 0] }, error: 'Config' },
];
