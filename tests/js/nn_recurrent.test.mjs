// kiln.nn.lstm and kiln.nn.gru in JS: layers registered in C++ (engine/include/kiln/nn/lstm.hpp,
// gru.hpp) whose factories make a Layer subclass with forwardWithState (bindings/js/nn_recurrent.ts,
// one engine call per sequence). Values and gradients against PyTorch 1.13's torch.nn.LSTM /
// GRU (batch_first=True) from tests/native/nn/rnn_fixtures.json (make_rnn_fixtures.py), which
// also holds the reference case gru_reset_gate_after_matmul.
import { readFileSync } from 'node:fs';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { init } from 'kiln-dl';
import { expectClose, expectKilnError } from './helpers.mjs';

const FIXTURES = JSON.parse(readFileSync(new URL('../native/nn/rnn_fixtures.json', import.meta.url), 'utf8'));
const fixture = (name) => FIXTURES.modules.find((m) => m.name === name);

let kiln;
beforeAll(async () => {
  kiln = await init();
});
afterEach(() => {
  expect(kiln.memory().tensors).toBe(0);
});

const tensor = (t) => kiln.Tensor.fromData(t.data, { shape: t.shape });
const configOf = (m) => ({ dInput: m.d_input, dHidden: m.d_hidden, bias: m.bias, numLayers: m.num_layers, bidirectional: m.bidirectional });
function load(layer, stateDict) {
  kiln.tidy(() => {
    const dict = {};
    for (const [k, v] of Object.entries(stateDict)) dict[k] = tensor(v);
    layer.loadStateDict(dict);
  });
}

describe('lstm and gru (registered in C++)', () => {
  it('are layer types with factories', () => {
    expect(kiln.nn.layerTypes).toEqual(expect.arrayContaining(['lstm', 'gru']));
    expect(typeof kiln.nn.lstm).toBe('function');
    expect(typeof kiln.nn.gru).toBe('function');
  });

  for (const name of ['lstm_2layer_bidirectional', 'gru_2layer_bidirectional', 'gru_3layer_unidirectional']) {
    it(`${name}: forwardWithState gives torch's values and gradients`, () => {
      const m = fixture(name);
      const lstm = m.kind === 'lstm';
      const layer = kiln.nn[m.kind](configOf(m));
      try {
        load(layer, m.state_dict);
        kiln.tidy(() => {
          expect(Object.keys(layer.namedParameters())).toEqual(Object.keys(m.state_dict));
          const x = tensor(m.x).requireGrad();
          const h0 = tensor(m.h0).requireGrad();
          const c0 = lstm ? tensor(m.c0).requireGrad() : null;
          const { output, state } = layer.forwardWithState(x, lstm ? { hidden: h0, cell: c0 } : { hidden: h0 });
          expect(output.shape).toEqual(m.output.shape);
          expectClose(output.dataSync(), m.output.data);
          expectClose(state.hidden.dataSync(), m.h_n.data);
          if (lstm) expectClose(state.cell.dataSync(), m.c_n.data);
          else expect(state.cell).toBeUndefined();
          let loss = output.mul(tensor(m.dy_output)).sum().add(state.hidden.mul(tensor(m.dy_h_n)).sum());
          if (lstm) loss = loss.add(state.cell.mul(tensor(m.dy_c_n)).sum());
          const g = loss.backward();
          expectClose(x.grad(g).dataSync(), m.grad_x.data);
          expectClose(h0.grad(g).dataSync(), m.grad_h0.data);
          if (lstm) expectClose(c0.grad(g).dataSync(), m.grad_c0.data);
          for (const [key, p] of Object.entries(layer.namedParameters())) {
            expectClose(p.grad(g).dataSync(), m[`grad_${key}`].data);
          }
        });
      } finally {
        layer.dispose();
      }
    });
  }

  it('forward(x) is the output sequence from a zero state', () => {
    for (const name of ['lstm_1layer_no_bias_zero_state', 'gru_1layer_no_bias_zero_state']) {
      const m = fixture(name);
      const layer = kiln.nn[m.kind](configOf(m));
      try {
        load(layer, m.state_dict);
        kiln.tidy(() => {
          const y = layer.forward(tensor(m.x));
          expectClose(y.dataSync(), m.output.data);
          const { output, state } = layer.forwardWithState(tensor(m.x));
          expectClose(output.dataSync(), m.output.data);
          expectClose(state.hidden.dataSync(), m.h_n.data);
        });
      } finally {
        layer.dispose();
      }
    }
  });

  it('gru applies the reset gate after the hidden matmul (shared case gru_reset_gate_after_matmul)', () => {
    const c = FIXTURES.shared_cases[0];
    expect(c.id).toBe('gru_reset_gate_after_matmul');
    const tol = c.tolerance;
    const layer = kiln.nn.gru({ dInput: 2, dHidden: 3, bias: true });
    const st = (t) => ({ shape: [1, ...t.shape], data: t.data });
    try {
      load(layer, { weight_ih_l0: c.inputs.w_ih, weight_hh_l0: c.inputs.w_hh, bias_ih_l0: c.inputs.b_ih, bias_hh_l0: c.inputs.b_hh });
      for (const objective of ['output', 'h_n']) {
        kiln.tidy(() => {
          const x = tensor(c.inputs.x).requireGrad();
          const h0 = tensor(st(c.inputs.h0)).requireGrad();
          const { output, state } = layer.forwardWithState(x, { hidden: h0 });
          expectClose(output.dataSync(), c.expected.output.data, tol);
          expectClose(state.hidden.dataSync(), c.expected.h_n.data, tol);
          const loss = objective === 'output' ? output.mul(tensor(c.inputs.dy_output)).sum() : state.hidden.mul(tensor(st(c.inputs.dy_h_n))).sum();
          const g = loss.backward();
          expectClose(x.grad(g).dataSync(), c.expected[`grad_x__${objective}`].data, tol);
          expectClose(h0.grad(g).dataSync(), c.expected[`grad_h0__${objective}`].data, tol);
          expectClose(layer.namedParameters().weight_hh_l0.grad(g).dataSync(), c.expected[`grad_w_hh__${objective}`].data, tol);
        });
      }
    } finally {
      layer.dispose();
    }
  });

  it('works in Sequential specs with PyTorch record keys', () => {
    const model = kiln.nn.sequential([
      { type: 'lstm', dInput: 3, dHidden: 4, bias: true, bidirectional: true },
      { type: 'linear', dInput: 8, dOutput: 2 },
    ], { seed: 1 });
    const single = kiln.nn.gru({ dInput: 3, dHidden: 2, bias: false, numLayers: 2 });
    try {
      kiln.tidy(() => {
        expect(model.forward(kiln.Tensor.ones([2, 5, 3])).shape).toEqual([2, 5, 2]);
        const keys = Object.keys(kiln.io.readSafetensors(model.saveSafetensors())).sort();
        expect(keys).toContain('0.weight_ih_l0_reverse');
        expect(keys).toContain('1.weight');
        expect(Object.keys(kiln.io.readSafetensors(single.saveSafetensors())).sort())
          .toEqual(['weight_hh_l0', 'weight_hh_l1', 'weight_ih_l0', 'weight_ih_l1']);
      });
      expect(model.config.layers[0]).toEqual({ type: 'lstm', dInput: 3, dHidden: 4, bias: true, numLayers: 1, bidirectional: true, dropout: 0 });
      expectKilnError(kiln, () => kiln.nn.sequential([
        { type: 'linear', dInput: 3, dOutput: 5 },
        { type: 'lstm', dInput: 4, dHidden: 4, bias: true }]), 'Config',
      /^SequentialConfig: layers\[1\] \(lstm\): dInput is 4 but the previous layer outputs/);
    } finally {
      model.dispose();
      single.dispose();
    }
  });

  it('eval mode and noGrad give the same values without a graph; clone keeps the class', () => {
    const layer = kiln.nn.lstm({ dInput: 2, dHidden: 3, bias: true, numLayers: 2, dropout: 0.5 }, { seed: 3 });
    const copy = layer.clone();
    try {
      expect(typeof copy.forwardWithState).toBe('function');
      layer.eval();
      kiln.tidy(() => {
        const x = kiln.Tensor.ones([1, 4, 2]);
        const a = layer.forwardWithState(x);
        const b = layer.forwardWithState(x);
        expect(a.output.dataSync()).toEqual(b.output.dataSync());  // no dropout in eval mode
        expect(a.output.isRequireGrad).toBe(false);
        layer.train();
        const c = kiln.noGrad(() => layer.forwardWithState(x.requireGrad()).state.cell);
        expect(c.isRequireGrad).toBe(false);
        expect(c.shape).toEqual([2, 1, 3]);
      });
    } finally {
      layer.dispose();
      copy.dispose();
    }
  });

  it('rejects bad inputs, states and configs by name', () => {
    const lstm = kiln.nn.lstm({ dInput: 4, dHidden: 3, bias: true });
    const gru = kiln.nn.gru({ dInput: 4, dHidden: 3, bias: true });
    try {
      kiln.tidy(() => {
        const x = kiln.Tensor.zeros([2, 5, 4]);
        const h = kiln.Tensor.zeros([1, 2, 3]);
        expectKilnError(kiln, () => lstm.forwardWithState(kiln.Tensor.zeros([2, 5, 3])), 'Shape',
          'Lstm::forward: expected input [batch_size, seqLength, dInput] with dInput = 4 (batch_size and seqLength >= 1), got [2, 5, 3]');
        expectKilnError(kiln, () => lstm.forward(kiln.Tensor.zeros([2, 4])), 'Shape',
          'Sequential::forward: layer 0 (lstm): Lstm::forward: expected input [batch_size, seqLength, dInput] (rank 3), got [2, 4]');
        expectKilnError(kiln, () => lstm.forwardWithState(x, { hidden: h }), 'Value',
          'forwardWithState: an lstm state needs both hidden and cell, got only hidden');
        expectKilnError(kiln, () => lstm.forwardWithState(x, { hidden: h, cell: kiln.Tensor.zeros([1, 1, 3]) }), 'Shape',
          /^Lstm::forward: expected state.cell \[numLayers·D, batch_size, dHidden\] = \[1, 2, 3\]/);
        expectKilnError(kiln, () => gru.forwardWithState(x, { hidden: h, cell: h }), 'Value', /unknown state field "cell"/);
        expectKilnError(kiln, () => gru.forwardWithState(x, 'h'), 'Type', /state must be an object/);
        expectKilnError(kiln, () => gru.forwardWithState([1, 2]), 'Type', /lstm|gru|x/);
        expect(gru.forwardWithState(x, { hidden: h }).state.hidden.shape).toEqual([1, 2, 3]);
      });
      expectKilnError(kiln, () => kiln.nn.lstm({ dInput: 4, dHidden: 0, bias: true }), 'Config',
        /dHidden must be >= 1, got 0/);
      expectKilnError(kiln, () => kiln.nn.gru({ dInput: 4, dHidden: 2 }), 'Config', /missing required field "bias"/);
      expectKilnError(kiln, () => kiln.nn.gru({ dInput: 4, dHidden: 2, bias: true, dropout: 2 }), 'Config', /dropout must be in \[0, 1\], got 2/);
    } finally {
      lstm.dispose();
      gru.dispose();
    }
    kiln.tidy(() => expectKilnError(kiln, () => lstm.forwardWithState(kiln.Tensor.zeros([1, 1, 4])), 'Disposed', /lstm.forwardWithState/));
    expect(kiln.memory().tensors).toBe(0);
  });
});
