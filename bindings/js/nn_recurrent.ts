// The layer classes of kiln.nn.lstm and kiln.nn.gru (registered in nn_layer_classes.ts): a
// Layer whose forward(x) is the output sequence from a zero state (its form in a
// Sequential), plus forwardWithState(x, state?) -> {output, state}. Each is one engine call
// per sequence (bindings/nn_recurrent.cpp; the time loop is engine/src/nn/rnn.cpp); this file
// checks only JS types.
import type { Layer } from './nn.js';
import { camelErrors, isPlainObject } from './nn.js';
import type { LayerClassMaker } from './nn_layer_classes.js';
import type { RawModule, RawTensor } from './raw.js';
import { describe, fail } from './tensor/checks.js';
import type { Engine } from './tensor/engine.js';
import type { Tensor } from './tensor/tensor.js';

/** An LSTM's state (PyTorch's (h, c); Burn's LstmState): `[numLayers·D, batch, dHidden]` each. */
export interface LstmState {
  hidden: Tensor;
  cell: Tensor;
}
/** A GRU's state: hidden `[numLayers·D, batch, dHidden]`. */
export interface GruState {
  hidden: Tensor;
}

/** kiln.nn.lstm(...): torch.nn.LSTM(batch_first=True) as a layer. */
export interface LstmLayer extends Layer {
  /**
   * The output sequence and the final state, from `state` (zeros when absent):
   * x `[batch, seqLength, dInput]` -> output `[batch, seqLength, D·dHidden]` (D = 2 when
   * bidirectional), state.hidden and state.cell `[numLayers·D, batch, dHidden]`. Gradients
   * reach x, the state and the weights in training mode. torch.nn.LSTM's
   * `output, (h_n, c_n) = lstm(x, (h_0, c_0))`.
   * @throws KilnError `Shape` for an input or state that does not fit (the engine's
   *   `Lstm::forward: expected input [batch_size, seqLength, dInput] with dInput = 4 ..., got [2, 5, 3]`),
   *   `Value` for a state with only one of hidden and cell, `Type` for non-tensors, `Disposed`.
   */
  forwardWithState(x: Tensor, state?: LstmState | null): { output: Tensor; state: LstmState };
}
/** kiln.nn.gru(...): torch.nn.GRU(batch_first=True) as a layer. */
export interface GruLayer extends Layer {
  /**
   * The output sequence and the final hidden state, from `state.hidden` (zeros when absent):
   * x `[batch, seqLength, dInput]` -> output `[batch, seqLength, D·dHidden]`, state.hidden
   * `[numLayers·D, batch, dHidden]`. torch.nn.GRU's `output, h_n = gru(x, h_0)`.
   * @throws KilnError `Shape` for an input or state that does not fit, `Value` for a cell,
   *   `Type` for non-tensors, `Disposed`.
   */
  forwardWithState(x: Tensor, state?: GruState | null): { output: Tensor; state: GruState };
}

function run(layer: Layer, raw: RawModule, e: Engine, op: string, x: unknown, state: unknown, lstm: boolean) {
  const h = layer._raw(op);
  const hx = e.unwrap(x, op, 'x');
  let hh: RawTensor | null = null;
  let hc: RawTensor | null = null;
  if (state !== undefined && state !== null) {
    if (!isPlainObject(state)) throw fail('Type', `${op}: state must be an object {hidden${lstm ? ', cell' : ''}}, got ${describe(state)}`);
    for (const k of Object.keys(state)) {
      if (k !== 'hidden' && (k !== 'cell' || !lstm)) throw fail(k === 'cell' ? 'Value' : 'Type', `${op}: unknown state field "${k}" (${lstm ? 'hidden, cell' : 'hidden'})`);
    }
    if (state.hidden !== undefined && state.hidden !== null) hh = e.unwrap(state.hidden, op, 'state.hidden');
    if (state.cell !== undefined && state.cell !== null) hc = e.unwrap(state.cell, op, 'state.cell');
  }
  const [out, hidden, cell, hasCell] = camelErrors(() => raw.recurrentForwardWithState(h, hx, hh, hc));
  if (!hasCell) {
    cell.delete();
    const [output, hn] = e.wrapAll([out, hidden]);
    return { output, state: { hidden: hn } };
  }
  const [output, hn, cn] = e.wrapAll([out, hidden, cell]);
  return { output, state: { hidden: hn, cell: cn } };
}

/** The class of kiln.nn.lstm layers. */
export const makeLstmClass: LayerClassMaker = (base, raw, e) =>
  class Lstm extends base {
    forwardWithState(x: Tensor, state?: LstmState | null): { output: Tensor; state: LstmState } {
      return run(this, raw, e, 'lstm.forwardWithState', x, state, true) as { output: Tensor; state: LstmState };
    }
  };

/** The class of kiln.nn.gru layers. */
export const makeGruClass: LayerClassMaker = (base, raw, e) =>
  class Gru extends base {
    forwardWithState(x: Tensor, state?: GruState | null): { output: Tensor; state: GruState } {
      return run(this, raw, e, 'gru.forwardWithState', x, state, false) as { output: Tensor; state: GruState };
    }
  };
