// The attention layers in JS (kiln.nn.multiHeadAttention, transformerEncoder,
// transformerDecoder, positionWiseFeedForward, positionalEncoding, rotaryEncoding) against
// PyTorch 1.13: tests/native/nn/attention_fixtures.json (make_attention_fixtures.py: values,
// gradients and state_dicts of torch.nn.MultiheadAttention / TransformerEncoder /
// TransformerDecoder with batch_first=True) and the shared cases
// mha_self_attention_and_key_padding / mha_fully_masked_row (tests/native/cases/cases.jsonl).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { init } from 'kiln-dl';
import { expectClose, expectKilnError } from './helpers.mjs';
import { caseCheck, caseInput, readCases } from './support/case_runner.mjs';

const F = JSON.parse(readFileSync(new URL('../native/nn/attention_fixtures.json', import.meta.url), 'utf8'));
const cases = readCases('cases.jsonl');
const TOL = { abs: 2e-5, rel: 1e-4 };

let kiln;
let T;
beforeAll(async () => {
  kiln = await init();
  T = kiln.Tensor;
});
afterEach(() => {
  expect(kiln.memory().tensors).toBe(0);
});

const ft = (j) => T.fromData(j.data, { shape: j.shape });
const bt = (j) => T.fromData(j.data, { shape: j.shape, dtype: 'bool' });

/** Sets a layer's parameters from a PyTorch state_dict (its keys are the layer's). */
function loadTorch(layer, params) {
  kiln.tidy(() => {
    const dict = {};
    for (const [k, v] of Object.entries(params)) dict[k] = ft(v);
    layer.loadStateDict(dict);
  });
}

/** Compares the gradient of every parameter with PyTorch's. */
function checkParamGrads(layer, grads, expected, torchKeys) {
  const params = layer.namedParameters();
  expect(Object.keys(params).sort()).toEqual(Object.keys(torchKeys).sort());
  for (const [k, p] of Object.entries(params)) {
    const g = p.grad(grads);
    expect(g, k).toBeTruthy();
    expectClose(g.dataSync(), expected[k].data, TOL);
  }
}

describe('multiHeadAttention', () => {
  it('attend: cross-attention with both masks, values and gradients as torch.nn.MultiheadAttention', () => {
    const f = F.mha;
    const mha = kiln.nn.multiHeadAttention({ dModel: 6, nHeads: 2, dropout: 0 });
    try {
      loadTorch(mha, f.params);
      kiln.tidy(() => {
        const q = ft(f.query).requireGrad();
        const k = ft(f.key).requireGrad();
        const v = ft(f.value).requireGrad();
        const { context, weights } = mha.attend({ query: q, key: k, value: v, maskPad: bt(f.mask_pad), maskAttn: bt(f.mask_attn) });
        expect(context.shape).toEqual([2, 3, 6]);
        expect(weights.shape).toEqual([2, 3, 4]);
        expectClose(context.dataSync(), f.context.data, TOL);
        expectClose(weights.dataSync(), f.weights.data, TOL);
        const grads = context.mul(ft(f.dy)).sum().backward();
        expectClose(q.grad(grads).dataSync(), f.grads.query.data, TOL);
        expectClose(k.grad(grads).dataSync(), f.grads.key.data, TOL);
        expectClose(v.grad(grads).dataSync(), f.grads.value.data, TOL);
        checkParamGrads(mha, grads, f.grads, f.params);
      });
    } finally {
      mha.dispose();
    }
  });

  it('forward(x) is self-attention, as in a Sequential; eval() mode gives the same without dropout', () => {
    const mha = kiln.nn.multiHeadAttention({ dModel: 6, nHeads: 2 });
    try {
      loadTorch(mha, F.mha.params);
      mha.eval();
      kiln.tidy(() => {
        const x = ft(F.mha_self.x);
        expectClose(mha.forward(x).dataSync(), F.mha_self.context.data, TOL);
        expectClose(mha.attend({ query: x }).context.dataSync(), F.mha_self.context.data, TOL);
      });
    } finally {
      mha.dispose();
    }
  });

  it('shared cases: key padding, and a fully masked query gives nan as PyTorch 1.13', () => {
    for (const id of ['mha_self_attention_and_key_padding', 'mha_fully_masked_row']) {
      const c = cases.get(id);
      const mha = kiln.nn.multiHeadAttention({ dModel: 4, nHeads: 2, dropout: 0 });
      try {
        kiln.tidy(() => {
          mha.loadStateDict({
            in_proj_weight: caseInput(T, c, 'in_proj_weight'),
            in_proj_bias: caseInput(T, c, 'in_proj_bias'),
            'out_proj.weight': caseInput(T, c, 'out_proj_weight'),
            'out_proj.bias': caseInput(T, c, 'out_proj_bias'),
          });
          const input = { query: caseInput(T, c, 'q'), key: caseInput(T, c, 'k'), value: caseInput(T, c, 'v'), maskPad: caseInput(T, c, 'key_padding_mask') };
          const outName = id === 'mha_fully_masked_row' ? 'out' : 'out_masked';
          caseCheck(c, outName, mha.attend(input).context);
          // The averaged weights are the mean of the case's per-head weights.
          const w = id === 'mha_fully_masked_row' ? c.expected.attn_weights : c.expected.attn_weights_masked;
          const perHead = T.fromData(w.data.map((x) => (x === 'nan' ? NaN : x)), { shape: w.shape });
          expectClose(mha.attend(input).weights.dataSync(), perHead.meanDim(1).dataSync(), c.tolerance);
        });
      } finally {
        mha.dispose();
      }
    }
  });

  it('errors: bad config, shapes and mask dtype name the layer', () => {
    expectKilnError(kiln, () => kiln.nn.multiHeadAttention({ dModel: 6, nHeads: 4 }), 'Config', /dModel must be a positive multiple of nHeads, got dModel = 6, nHeads = 4/);
    const mha = kiln.nn.multiHeadAttention({ dModel: 4, nHeads: 2 });
    try {
      kiln.tidy(() => {
        const x = T.zeros([2, 3, 4]);
        expectKilnError(kiln, () => mha.attend({ query: T.zeros([2, 3, 5]) }), 'Shape', /expected query \[batch_size, seqQ, dModel\] with dModel = 4, got \[2, 3, 5\]/);
        expectKilnError(kiln, () => mha.attend({ query: x, maskPad: T.zeros([2, 3]) }), 'DType', /MultiHeadAttention.attend/);
        expectKilnError(kiln, () => mha.attend({ query: x, maskPad: T.fromData([true, false], { shape: [1, 2], dtype: 'bool' }) }), 'Shape', /expected maskPad \[batch_size, seqK\] = \[2, 3\], got \[1, 2\]/);
        expectKilnError(kiln, () => mha.forward(T.zeros([2, 4])), 'Shape', /layer 0 \(multiHeadAttention\)/);
      });
    } finally {
      mha.dispose();
    }
  });
});

describe('transformers', () => {
  for (const tag of ['norm_last', 'norm_first']) {
    it(`transformerEncoder (${tag}) with padding and causal masks matches torch.nn.TransformerEncoder`, () => {
      const f = F[`encoder_${tag}`];
      const enc = kiln.nn.transformerEncoder({ dModel: 8, dFf: 16, nHeads: 2, nLayers: 2, dropout: 0, normFirst: f.norm_first, activation: f.activation });
      try {
        loadTorch(enc, f.params);
        kiln.tidy(() => {
          const x = ft(f.x).requireGrad();
          const causal = enc.autoregressiveMask(5);
          expect(causal.shape).toEqual([1, 5, 5]);
          const y = enc.forward(x, { maskPad: bt(f.mask_pad), maskAttn: causal });
          expectClose(y.dataSync(), f.y.data, TOL);
          const grads = y.mul(ft(f.dy)).sum().backward();
          expectClose(x.grad(grads).dataSync(), f.grads.x.data, TOL);
          checkParamGrads(enc, grads, f.grads, f.params);
          expectClose(enc.forward(x).dataSync(), f.y_nomask.data, TOL);
        });
      } finally {
        enc.dispose();
      }
    });

    it(`transformerDecoder (${tag}) with target causal and memory padding masks matches torch.nn.TransformerDecoder`, () => {
      const f = F[`decoder_${tag}`];
      const dec = kiln.nn.transformerDecoder({ dModel: 8, dFf: 16, nHeads: 2, nLayers: 2, dropout: 0, normFirst: f.norm_first, activation: f.activation });
      try {
        loadTorch(dec, f.params);
        dec.eval();
        kiln.tidy(() => {
          const y = dec.forward(ft(f.target), ft(f.memory), { targetMaskAttn: bt(f.target_mask_attn), memoryMaskPad: bt(f.memory_mask_pad) });
          expectClose(y.dataSync(), f.y.data, TOL);
          expectKilnError(kiln, () => dec.forward(ft(f.target)), 'Config', /TransformerDecoder: cannot run inside a Sequential: its forward needs the memory/);
        });
      } finally {
        dec.dispose();
      }
    });
  }

  it('a Sequential spec with encodings, attention, an encoder and a feed-forward block trains end to end', () => {
    const model = kiln.nn.sequential([
      { type: 'linear', dInput: 3, dOutput: 8 },
      { type: 'positionalEncoding', dModel: 8 },
      { type: 'rotaryEncoding', maxSequenceLength: 16, dModel: 8 },
      { type: 'multiHeadAttention', dModel: 8, nHeads: 2, dropout: 0 },
      { type: 'transformerEncoder', dModel: 8, dFf: 16, nHeads: 2, nLayers: 1, dropout: 0 },
      { type: 'positionWiseFeedForward', dModel: 8, dFf: 4, dropout: 0 },
    ], { seed: 3 });
    try {
      kiln.tidy(() => {
        expect(Object.keys(model.namedParameters())).toContain('4.layers.0.self_attn.in_proj_weight');
        const x = T.ones([2, 5, 3]).requireGrad();
        const y = model.forward(x);
        expect(y.shape).toEqual([2, 5, 8]);
        const g = x.grad(y.sum().backward());
        expect(g.shape).toEqual([2, 5, 3]);
      });
    } finally {
      model.dispose();
    }
    expectKilnError(kiln, () => kiln.nn.sequential([{ type: 'linear', dInput: 3, dOutput: 6 }, { type: 'multiHeadAttention', dModel: 8, nHeads: 2 }]), 'Config', /layers\[1\] \(multiHeadAttention\): dModel is 8/);
    expectKilnError(kiln, () => kiln.nn.transformerEncoder({ dModel: 8, dFf: 8, nHeads: 2, nLayers: 1, activation: 'tanh' }), 'Config', /activation must be "relu" or "gelu", got "tanh"/);
  });
});

describe('encodings', () => {
  it('positionalEncoding adds the sinusoids of Vaswani et al.', () => {
    const pe = kiln.nn.positionalEncoding({ dModel: 6 });
    try {
      kiln.tidy(() => {
        expectClose(pe.forward(ft(F.positional.x)).dataSync(), F.positional.y.data, { abs: 1e-6, rel: 1e-6 });
        expectKilnError(kiln, () => pe.forward(T.zeros([1, 2, 4])), 'Shape', /PositionalEncoding::forward/);
      });
    } finally {
      pe.dispose();
    }
    expectKilnError(kiln, () => kiln.nn.positionalEncoding({ dModel: 5 }), 'Config', /dModel must be even/);
  });

  it('rotaryEncoding rotates interleaved pairs as RoFormer (rank 3 in a layer)', () => {
    const rope = kiln.nn.rotaryEncoding({ maxSequenceLength: 8, dModel: 4 });
    try {
      kiln.tidy(() => {
        // The fixture is [2, 2, 3, 4]; as a layer the input is [batch, seq, dModel]: [4, 3, 4].
        const x = ft(F.rotary.x).reshape([4, 3, 4]);
        expectClose(rope.forward(x).dataSync(), F.rotary.y_start['0'].data, { abs: 1e-6, rel: 1e-5 });
      });
    } finally {
      rope.dispose();
    }
  });
});

describe('declarations', () => {
  it('type-check tests/js/types/attention_consumer.ts with --strict', () => {
    const root = fileURLToPath(new URL('../..', import.meta.url));
    const tsc = fileURLToPath(new URL('../../node_modules/typescript/bin/tsc', import.meta.url));
    let output = '';
    try {
      execFileSync(process.execPath, [tsc, '-p', 'tests/js/types/tsconfig.attention.json'], { cwd: root, encoding: 'utf8' });
    } catch (e) {
      output = `${e.stdout ?? ''}${e.stderr ?? ''}`;
    }
    expect(output).toBe('');
  }, 60_000);
});
