// Per-type classes of single layers. Most layers are a plain `Layer` (one tensor in, one
// out: `layer.forward(x)`); a layer type whose forward takes or returns more than one tensor
// (lstm's state, multiHeadAttention's key, value and masks) registers here a subclass with
// its extra methods, and its kiln.nn factory (and clone()) then makes instances of it.
import type { Layer } from './nn.js';
import type { RawModule } from './raw.js';
import type { Engine } from './tensor/engine.js';
import { makeGruClass, makeLstmClass } from './nn_recurrent.js';
import { makeMultiHeadAttention, makeTransformerDecoder, makeTransformerEncoder } from './nn_attention.js';

/** This kiln instance's Layer class. */
export type LayerClass = new (token: symbol, handle: never) => Layer;

/**
 * Makes the subclass of `base` (this instance's Layer class) for one layer type:
 * `(base, raw, e) => class Lstm extends base { forwardWithState(...) { ... } }`.
 */
export type LayerClassMaker = (base: LayerClass, raw: RawModule, e: Engine) => LayerClass;

/** Layer type (camelCase, as kiln.nn.layerTypes) -> the maker of its class. */
export const layerClassMakers: Record<string, LayerClassMaker> = {};
layerClassMakers.lstm = makeLstmClass;
layerClassMakers.gru = makeGruClass;
layerClassMakers.multiHeadAttention = makeMultiHeadAttention;
layerClassMakers.transformerEncoder = makeTransformerEncoder;
layerClassMakers.transformerDecoder = makeTransformerDecoder;
