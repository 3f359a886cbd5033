// Configs and specs cross into the engine as JS values, not JSON text (issue 17: no JSON
// parser in the module a page downloads; bindings/config_js.hpp). The engine must read a
// value exactly as it read the JSON text of it: an integer-valued number is an integer when
// it fits in 64 bits (as its digits would parse), anything else a float; the limits of
// config::parse (nesting depth, max_layers) hold; and a value JSON cannot carry, handed to the
// raw engine directly, is a Config error naming it, not a crash or a silent null.
// Expected messages are written by hand from those rules.
import { beforeAll, describe, expect, it } from 'vitest';
import { init } from 'kiln-dl';
import { expectKilnError } from './helpers.mjs';

let kiln;
let raw;
beforeAll(async () => {
  kiln = await init();
  raw = kiln._internals.raw;
});

function stillExact() {
  kiln.tidy(() => {
    // [[1, 2], [3, 4]] · [[1, 2], [3, 4]] = [[7, 10], [15, 22]] (by hand)
    const a = kiln.Tensor.fromData([[1, 2], [3, 4]]);
    expect(a.matmul(a).toArray()).toEqual([[7, 10], [15, 22]]);
  });
}

const layer0 = 'SequentialConfig: layers[0] (linear): dInput';

describe('numbers read as the JSON text of them would be', () => {
  it('an integer-valued number within 64 bits is an integer; beyond, or fractional, a float', () => {
    // 2.5: a float. -1: a signed integer (the range check speaks). 2^63: an unsigned integer
    // past int64's range. 2^64 (JSON.stringify: 18446744073709552000, past uint64): a float.
    expectKilnError(kiln, () => kiln.nn.linear({ dInput: 2.5, dOutput: 3 }), 'Config',
      `${layer0}: expected an integer, got the number 2.5`);
    expectKilnError(kiln, () => kiln.nn.linear({ dInput: -1, dOutput: 3 }), 'Config', `${layer0} must be >= 1, got -1`);
    expectKilnError(kiln, () => kiln.nn.linear({ dInput: 2 ** 63, dOutput: 3 }), 'Config',
      `${layer0}: expected an integer in [-9223372036854775808, 9223372036854775807], got the integer 9223372036854775808`);
    expectKilnError(kiln, () => kiln.nn.linear({ dInput: -(2 ** 63), dOutput: 3 }), 'Config',
      `${layer0} must be >= 1, got -9223372036854775808`);
    expectKilnError(kiln, () => kiln.nn.linear({ dInput: 2 ** 64, dOutput: 3 }), 'Config',
      `${layer0}: expected an integer, got the number 1.8446744073709552e+19`);
    expectKilnError(kiln, () => kiln.nn.linear({ dInput: 1e300, dOutput: 3 }), 'Config',
      `${layer0}: expected an integer, got the number 1e+300`);
    stillExact();
  });

  it('-0 is the integer 0 and a float field takes an integer', () => {
    expectKilnError(kiln, () => kiln.nn.linear({ dInput: -0, dOutput: 3 }), 'Config', `${layer0} must be >= 1, got 0`);
    // lr 1 (an integer in the value) is the rate 1: rates 1, 1, 0.5, 0.5, 0.25 (by hand).
    const s = kiln.optim.schedule.step({ initialLr: 1, stepSize: 2, gamma: 0.5 });
    expect(Array.from(s.values(5))).toEqual([1, 1, 0.5, 0.5, 0.25]);
  });
});

describe('the limits of config::parse hold for values', () => {
  it('a spec of more than max_layers layers is Limit before any layer is built', () => {
    const layers = Array.from({ length: 4097 }, () => ({ type: 'relu' }));
    expectKilnError(kiln, () => kiln.nn.sequential({ layers }), 'Limit',
      'JSON string: the array at layers has more than 4096 elements (the limit of SequentialConfig::maxLayers)');
    stillExact();
  });

  it("a value nested deeper than 64 levels is Limit, naming where (the object and 63 arrays fit)", () => {
    let deep = 1;
    for (let i = 0; i < 70; i++) deep = [deep];
    expectKilnError(kiln, () => raw.lossValidate({ kind: 'mse', extra: deep }), 'Limit',
      /^loss: JSON nested deeper than 64 arrays\/objects \(the limit of config::ParseLimits::max_depth\) at extra(\[0\]){63}$/);
    stillExact();
  });
});

describe('values JSON cannot carry, handed to the raw engine', () => {
  it('undefined, a function or a non-finite number is Config naming it', () => {
    expectKilnError(kiln, () => raw.modelCreate(undefined, -1, false), 'Config',
      'JSON string: expected a JSON value (null, boolean, number, string, array or object), got undefined');
    expectKilnError(kiln, () => raw.lossValidate({ kind: 'huber', delta: () => 1 }), 'Config',
      'loss: expected a JSON value (null, boolean, number, string, array or object), got function');
    expectKilnError(kiln, () => raw.lossValidate({ kind: 'huber', delta: NaN }), 'Config',
      'loss: expected a finite number, got NaN');
    expectKilnError(kiln, () => raw.scheduleValues(-Infinity, 1), 'Config', 'schedule: expected a finite number, got -Infinity');
    stillExact();
  });

  it('a well-formed value passes: the raw schedule of a plain number is a constant rate', () => {
    expect(Array.from(raw.scheduleValues(0.25, 3))).toEqual([0.25, 0.25, 0.25]);
    expect(Array.from(raw.scheduleValues({ kind: 'step', initial_lr: 1, step_size: 1, gamma: 0.5 }, 3))).toEqual([1, 0.5, 0.25]);
  });
});
