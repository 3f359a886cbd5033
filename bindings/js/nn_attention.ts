// The attention layers' own methods (kiln.nn.multiHeadAttention, transformerEncoder,
// transformerDecoder): Layer subclasses registered in nn_layer_classes.ts. Each method is
// one engine call (bindings/nn_attention.cpp); forward(x) of the base class is the layer's
// form inside a Sequential (self-attention without masks).
import type { LayerClass, LayerClassMaker } from './nn_layer_classes.js';
import { camelErrors } from './nn.js';
import type { RawModel, RawModule, RawTensor } from './raw.js';
import type { Engine } from './tensor/engine.js';
import type { Tensor } from './tensor/tensor.js';
import { checkInt, checkOptions } from './tensor/checks.js';

/** Masks of attention, PyTorch's boolean convention: true = not attended. */
export interface AttentionMasks {
  /** bool `[batch, seqK]`: true = ignore that key (PyTorch's key_padding_mask). */
  maskPad?: Tensor | null;
  /** bool `[seqQ, seqK]` (every item) or `[batch, seqQ, seqK]`: true = masked (PyTorch's boolean attn_mask). */
  maskAttn?: Tensor | null;
}

/** The input of MultiHeadAttention.attend (Burn's MhaInput). */
export interface MhaInput extends AttentionMasks {
  /** `[batch, seqQ, dModel]` */
  query: Tensor;
  /** `[batch, seqK, dModel]` (default: query) */
  key?: Tensor;
  /** `[batch, seqK, dModel]` (default: key) */
  value?: Tensor;
}

/** The output of MultiHeadAttention.attend (Burn's MhaOutput). */
export interface MhaOutput {
  /** `[batch, seqQ, dModel]` */
  context: Tensor;
  /** `[batch, seqQ, seqK]`: the attention weights averaged over the heads (PyTorch's default). */
  weights: Tensor;
}

/** Masks of TransformerDecoder.forward (PyTorch's tgt/memory masks, boolean). */
export interface DecoderMasks {
  /** bool `[batch, seqTgt]` (tgt_key_padding_mask) */
  targetMaskPad?: Tensor | null;
  /** bool `[seqTgt, seqTgt]` or `[batch, seqTgt, seqTgt]` (tgt_mask), e.g. autoregressiveMask(seqTgt) */
  targetMaskAttn?: Tensor | null;
  /** bool `[batch, seqMem]` (memory_key_padding_mask) */
  memoryMaskPad?: Tensor | null;
  /** bool `[seqTgt, seqMem]` or `[batch, seqTgt, seqMem]` (memory_mask) */
  memoryMaskAttn?: Tensor | null;
}

interface Internals {
  _raw(op: string): RawModel;
  _e: Engine;
}

function maskArg(e: Engine, m: unknown, op: string, what: string): RawTensor | null {
  return m === undefined || m === null ? null : e.unwrap(m, op, what);
}

/** Burn's generate_autoregressive_mask as a method of the attention layers. */
function autoregressiveMask(raw: RawModule, e: Engine, seqLength: number, batchSize: number, op: string): Tensor {
  checkInt(seqLength, op, 'seqLength');
  checkInt(batchSize, op, 'batchSize');
  return e.wrap(camelErrors(() => raw.generateAutoregressiveMask(batchSize, seqLength)));
}

/** kiln.nn.multiHeadAttention's class. */
export const makeMultiHeadAttention: LayerClassMaker = (base: LayerClass, raw: RawModule, e: Engine) =>
  class MultiHeadAttention extends base {
    /**
     * Multi-head attention of query over key/value (torch.nn.MultiheadAttention with
     * batch_first=True; Burn's MultiHeadAttention::forward): `{query [batch, seqQ, dModel],
     * key, value [batch, seqK, dModel], maskPad?, maskAttn?} -> {context [batch, seqQ,
     * dModel], weights [batch, seqQ, seqK]}`. A query whose keys are all masked gives nan (PyTorch 1.13).
     * In training mode the outputs carry the graph; in eval() mode no dropout.
     * @throws KilnError `Shape` for shapes that do not fit, `DType` for a non-bool mask, `Type`, `Disposed`.
     */
    attend(input: MhaInput): MhaOutput {
      const op = 'MultiHeadAttention.attend';
      const o = checkOptions<MhaInput>(input, op);
      const self = this as unknown as Internals;
      const h = self._raw(op);
      const q = e.unwrap(o.query, op, 'query');
      const k = o.key === undefined ? q : e.unwrap(o.key, op, 'key');
      const v = o.value === undefined ? k : e.unwrap(o.value, op, 'value');
      const pad = maskArg(e, o.maskPad, op, 'maskPad');
      const attn = maskArg(e, o.maskAttn, op, 'maskAttn');
      const [context, weights] = e.wrapPair(camelErrors(() => raw.mhaAttend(h, q, k, v, pad, attn)));
      return { context, weights };
    }

    /** Burn's generate_autoregressive_mask: bool `[batchSize, seqLength, seqLength]`, true above the diagonal. */
    autoregressiveMask(seqLength: number, batchSize = 1): Tensor {
      return autoregressiveMask(raw, e, seqLength, batchSize, 'MultiHeadAttention.autoregressiveMask');
    }
  } as unknown as LayerClass;

/** kiln.nn.transformerEncoder's class. */
export const makeTransformerEncoder: LayerClassMaker = (base: LayerClass, raw: RawModule, e: Engine) =>
  class TransformerEncoder extends base {
    /**
     * `[batch, seq, dModel] -> [batch, seq, dModel]` with optional masks (PyTorch's
     * src_key_padding_mask as maskPad, src_mask as maskAttn; torch.nn.TransformerEncoder with
     * batch_first=True, Burn's TransformerEncoder). Without masks the same as inside a Sequential.
     * @throws KilnError `Shape`, `DType` for a non-bool mask, `Type`, `Disposed`.
     */
    forward(x: Tensor, masks?: AttentionMasks): Tensor {
      const op = 'TransformerEncoder.forward';
      const o = checkOptions<AttentionMasks>(masks, op);
      const h = (this as unknown as Internals)._raw(op);
      const input = e.unwrap(x, op, 'x');
      const pad = maskArg(e, o.maskPad, op, 'maskPad');
      const attn = maskArg(e, o.maskAttn, op, 'maskAttn');
      return e.wrap(camelErrors(() => raw.transformerEncoderForward(h, input, pad, attn)));
    }

    /** Burn's generate_autoregressive_mask: bool `[batchSize, seqLength, seqLength]`, true above the diagonal. */
    autoregressiveMask(seqLength: number, batchSize = 1): Tensor {
      return autoregressiveMask(raw, e, seqLength, batchSize, 'TransformerEncoder.autoregressiveMask');
    }
  } as unknown as LayerClass;

/** kiln.nn.transformerDecoder's class. */
export const makeTransformerDecoder: LayerClassMaker = (base: LayerClass, raw: RawModule, e: Engine) =>
  class TransformerDecoder extends base {
    /**
     * `target [batch, seqTgt, dModel], memory [batch, seqMem, dModel] -> [batch, seqTgt,
     * dModel]` (torch.nn.TransformerDecoder with batch_first=True, Burn's TransformerDecoder).
     * The decoder cannot run inside a Sequential (it needs the memory): forward(x) alone
     * throws `Config`.
     * @throws KilnError `Shape`, `DType` for a non-bool mask, `Config` without memory, `Type`, `Disposed`.
     */
    forward(target: Tensor, memory?: Tensor, masks?: DecoderMasks): Tensor {
      const op = 'TransformerDecoder.forward';
      if (memory === undefined) return super.forward(target);
      const o = checkOptions<DecoderMasks>(masks, op);
      const h = (this as unknown as Internals)._raw(op);
      const t = e.unwrap(target, op, 'target');
      const m = e.unwrap(memory, op, 'memory');
      const a = maskArg(e, o.targetMaskPad, op, 'targetMaskPad');
      const b = maskArg(e, o.targetMaskAttn, op, 'targetMaskAttn');
      const c = maskArg(e, o.memoryMaskPad, op, 'memoryMaskPad');
      const d = maskArg(e, o.memoryMaskAttn, op, 'memoryMaskAttn');
      return e.wrap(camelErrors(() => raw.transformerDecoderForward(h, t, m, a, b, c, d)));
    }

    /** Burn's generate_autoregressive_mask: bool `[batchSize, seqLength, seqLength]`, true above the diagonal. */
    autoregressiveMask(seqLength: number, batchSize = 1): Tensor {
      return autoregressiveMask(raw, e, seqLength, batchSize, 'TransformerDecoder.autoregressiveMask');
    }
  } as unknown as LayerClass;
