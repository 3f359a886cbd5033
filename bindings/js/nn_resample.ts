// kiln.nn.functional's 3-D pools and interpolate (torch.nn.functional.max_pool3d,
// avg_pool3d, adaptive_avg_pool3d, interpolate): each one call into the engine
// (bindings/nn_resample.cpp). This file checks only JS types and fills PyTorch's defaults;
// values and shapes are checked by the engine, whose messages name the op (`maxPool3d: ...`).
import { camelErrors } from './nn.js';
import type { RawTensor } from './raw.js';
import { checkBool, checkInt, checkNumber, checkOptions, describe, fail } from './tensor/checks.js';
import type { Engine } from './tensor/engine.js';
import type { Tensor } from './tensor/tensor.js';
import type { Size3d } from './train_api.js';


/** Options of maxPool3d (torch.nn.functional.max_pool3d); triples are [depth, height, width]. */
export interface MaxPool3dOptions {
  kernelSize: Size3d;
  /** Default: kernelSize. */
  stride?: Size3d;
  /** -inf padding on both sides, at most kernelSize / 2 (default 0). */
  padding?: Size3d;
  /** Spacing between window elements (default 1). */
  dilation?: Size3d;
  /** Ceil instead of floor in the output-size rule; a last window starting in the right padding is dropped. */
  ceilMode?: boolean;
}

/** Options of avgPool3d (torch.nn.functional.avg_pool3d, no divisorOverride). */
export interface AvgPool3dOptions {
  kernelSize: Size3d;
  /** Default: kernelSize. */
  stride?: Size3d;
  /** Zero padding on both sides, at most kernelSize / 2 (default 0). */
  padding?: Size3d;
  /** Divide by the window size including padding (default true) or by the elements inside. */
  countIncludePad?: boolean;
  ceilMode?: boolean;
}

/** Options of interpolate (torch.nn.functional.interpolate): exactly one of size and scaleFactor. */
export interface InterpolateOptions {
  /** Output spatial size: one number for every spatial dim, or one per dim. */
  size?: number | readonly number[];
  /** Multiplier of each spatial size (output floor(in · scaleFactor)); also the index scale, as PyTorch. */
  scaleFactor?: number | readonly number[];
  /** 'nearest' (default; 3-D and 4-D input) or 'bilinear' (4-D input). */
  mode?: 'nearest' | 'bilinear';
  /** Bilinear only: corner pixels of input and output aligned (default false). */
  alignCorners?: boolean;
}

/** The 3-D pools and interpolate of kiln.nn.functional. */
export interface ResampleFunctional {
  /**
   * `[batch, c, d, h, w] -> [batch, c, d', h', w']`, per dim
   * floor((in + 2·padding - dilation·(k - 1) - 1) / stride) + 1 (ceil in ceilMode); gradient
   * to the first maximum of each window. @throws KilnError `Rank` unless x is 5-D, `Config`
   * for a bad kernel, stride, padding or dilation, `Shape` if the window exceeds the padded
   * input. torch.nn.functional.max_pool3d.
   */
  maxPool3d(x: Tensor, options: MaxPool3dOptions): Tensor;
  /** `[batch, c, d, h, w] -> [batch, c, d', h', w']`, the mean of each window. @throws as maxPool3d. torch.nn.functional.avg_pool3d. */
  avgPool3d(x: Tensor, options: AvgPool3dOptions): Tensor;
  /**
   * `[batch, c, d, h, w] -> [batch, c, outD, outH, outW]`, windows
   * [floor(i·in/out), ceil((i+1)·in/out)) per dim. @throws `Config` for an output size < 1,
   * `Shape` for an empty spatial dim. torch.nn.functional.adaptive_avg_pool3d.
   */
  adaptiveAvgPool3d(x: Tensor, outputSize: Size3d): Tensor;
  /**
   * Resizes `[batch, c, h, w]` (nearest or bilinear) or `[batch, c, length]` (nearest) with
   * PyTorch 1.13's rules: nearest reads floor(dst · scale), bilinear mixes the two nearest
   * rows/columns, scale = 1 / scaleFactor when given, else in / out (alignCorners:
   * (in - 1) / (out - 1)). @throws KilnError `Config` for both or neither of size and
   * scaleFactor, bad sizes or factors, alignCorners with nearest; `Rank` for bilinear on 3-D
   * input or another rank; `Shape` for an output size of 0. torch.nn.functional.interpolate.
   */
  interpolate(x: Tensor, options: InterpolateOptions): Tensor;
}

/** One integer or three -> three integers. */
function triple(v: unknown, op: string, what: string, dflt?: number[]): number[] {
  if (v === undefined && dflt !== undefined) return dflt;
  if (typeof v === 'number') return [0, 0, 0].map(() => checkInt(v, op, what));
  if (Array.isArray(v) && v.length === 3) return Array.from(v as unknown[], (x: unknown, i: number) => checkInt(x, op, `${what}[${i}]`));
  throw fail('Type', `${op}: ${what} must be an integer or 3 integers, got ${describe(v)}`);
}

/** Checks an options object: a plain object whose keys are all in `allowed`. */
function opts<T extends object>(v: unknown, op: string, allowed: readonly string[]): Partial<T> {
  const o = checkOptions<T>(v, op);
  for (const key of Object.keys(o)) {
    if (!allowed.includes(key)) throw fail('Type', `${op}: unknown option "${key}" (options: ${allowed.join(', ')})`);
  }
  return o;
}

/** A number or an array of numbers -> an array (null when absent). */
function list(v: unknown, op: string, what: string, int: boolean): number[] | null {
  if (v === undefined || v === null) return null;
  const one = (x: unknown, w: string): number => (int ? checkInt(x, op, w) : checkNumber(x, op, w));
  if (typeof v === 'number') return [one(v, what)];
  if (Array.isArray(v)) return Array.from(v as unknown[], (x: unknown, i: number) => one(x, `${what}[${i}]`));
  throw fail('Type', `${op}: ${what} must be a number or an array of numbers, got ${describe(v)}`);
}

/** kiln.nn.functional's resampling members for one engine instance. */
export function resampleApi(e: Engine): ResampleFunctional {
  const raw = e.raw;
  const t = (v: unknown, op: string, what: string): RawTensor => e.unwrap(v, op, what);
  const call = (f: () => RawTensor): Tensor => e.wrap(camelErrors(f));
  return {
    maxPool3d(x: Tensor, options: MaxPool3dOptions): Tensor {
      const op = 'maxPool3d';
      const o = opts<MaxPool3dOptions>(options, op, ['kernelSize', 'stride', 'padding', 'dilation', 'ceilMode']);
      const kernel = triple(o.kernelSize, op, 'kernelSize');
      const stride = triple(o.stride, op, 'stride', kernel);
      const padding = triple(o.padding, op, 'padding', [0, 0, 0]);
      const dilation = triple(o.dilation, op, 'dilation', [1, 1, 1]);
      const ceil = o.ceilMode === undefined ? false : checkBool(o.ceilMode, op, 'ceilMode');
      const hx = t(x, op, 'x');
      return call(() => raw.fMaxPool3d(hx, kernel, stride, padding, dilation, ceil));
    },
    avgPool3d(x: Tensor, options: AvgPool3dOptions): Tensor {
      const op = 'avgPool3d';
      const o = opts<AvgPool3dOptions>(options, op, ['kernelSize', 'stride', 'padding', 'countIncludePad', 'ceilMode']);
      const kernel = triple(o.kernelSize, op, 'kernelSize');
      const stride = triple(o.stride, op, 'stride', kernel);
      const padding = triple(o.padding, op, 'padding', [0, 0, 0]);
      const include = o.countIncludePad === undefined ? true : checkBool(o.countIncludePad, op, 'countIncludePad');
      const ceil = o.ceilMode === undefined ? false : checkBool(o.ceilMode, op, 'ceilMode');
      const hx = t(x, op, 'x');
      return call(() => raw.fAvgPool3d(hx, kernel, stride, padding, include, ceil));
    },
    adaptiveAvgPool3d(x: Tensor, outputSize: Size3d): Tensor {
      const op = 'adaptiveAvgPool3d';
      const out = triple(outputSize, op, 'outputSize');
      const hx = t(x, op, 'x');
      return call(() => raw.fAdaptiveAvgPool3d(hx, out));
    },
    interpolate(x: Tensor, options: InterpolateOptions): Tensor {
      const op = 'interpolate';
      const o = opts<InterpolateOptions>(options, op, ['size', 'scaleFactor', 'mode', 'alignCorners']);
      const size = list(o.size, op, 'size', true);
      const scale = list(o.scaleFactor, op, 'scaleFactor', false);
      const mode: unknown = o.mode === undefined ? 'nearest' : o.mode;
      if (typeof mode !== 'string') throw fail('Type', `${op}: mode must be a string, got ${describe(mode)}`);
      const align = o.alignCorners === undefined ? false : checkBool(o.alignCorners, op, 'alignCorners');
      const hx = t(x, op, 'x');
      return call(() => raw.fInterpolate(hx, size, scale, mode, align));
    },
  };
}
