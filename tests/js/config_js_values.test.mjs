// JS values that JSON cannot carry, in configs and data (issue 14, "Errors that are not
// KilnErrors"): a BigInt, a function or a symbol in a layer spec or an optimizer config, a
// spec that contains itself, a config or nested data deeper than JavaScript's call stack.
// Each was a raw TypeError/RangeError from JSON.stringify or the data walker (or, for a
// function, silently dropped); each is now a KilnError naming the call, and the instance
// keeps computing exactly.
import { beforeAll, describe, expect, it } from 'vitest';
import { init } from 'kiln-dl';
import { expectKilnError } from './helpers.mjs';

let kiln;
beforeAll(async () => {
  kiln = await init();
});

function stillExact() {
  kiln.tidy(() => {
    // [[1, 2], [3, 4]] · [[1, 2], [3, 4]] = [[7, 10], [15, 22]] (by hand)
    const a = kiln.Tensor.fromData([[1, 2], [3, 4]]);
    expect(a.matmul(a).toArray()).toEqual([[7, 10], [15, 22]]);
  });
}

describe('values JSON cannot carry', () => {
  it('a BigInt, a function or a symbol in a layer spec is Type, naming the field', () => {
    expectKilnError(kiln, () => kiln.nn.linear({ dInput: 3n, dOutput: 2 }), 'Type', /dInput: .*got the bigint 3n/);
    expectKilnError(kiln, () => kiln.nn.conv2d({ channels: [1n, 1], kernelSize: 3 }), 'Type', /element 0: .*got the bigint 1n/);
    expectKilnError(kiln, () => kiln.nn.linear({ dInput: 3, dOutput: 2, initializer: () => 1 }), 'Type', /initializer: .*got a function/);
    expectKilnError(kiln, () => kiln.nn.sequential([{ type: 'linear', dInput: 2, dOutput: Symbol('x') }]), 'Type', /dOutput: .*got a symbol/);
    expectKilnError(kiln, () => kiln.optim.sgd({ lr: 0.1, momentum: 1n }), 'Type', 'optim.sgd: momentum must be a number, got the bigint 1n');
    stillExact();
  });

  it('a spec that contains itself is Config', () => {
    const o = { type: 'relu' };
    o.self = o;
    expectKilnError(kiln, () => kiln.nn.sequential({ layers: [o] }), 'Config', /contains itself/);
    stillExact();
  });

  it('a config nested deeper than the call stack is Limit', () => {
    let o = {};
    for (let i = 0; i < 20000; i++) o = { a: o };
    expectKilnError(kiln, () => kiln.nn.linear({ dInput: 1, dOutput: 1, initializer: o }), 'Limit', /nested too deeply/);
    stillExact();
  });

  it('data nested deeper than the call stack is Limit', () => {
    let a = [1];
    for (let i = 0; i < 20000; i++) a = [a];
    expectKilnError(kiln, () => kiln.Tensor.fromData(a), 'Limit', /fromData: data nests 20001 arrays deep/);
    stillExact();
  });
});
