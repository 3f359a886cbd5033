// The site fetches the rest of the single-thread engine in the background after init()
// (web/src/engine.js loadEngine: kiln.loadDeferred()), so that no action of the playground
// waits on a synchronous request for the deferred module (helper-64's user test: the page
// fetched it synchronously at open, through model.summary). In Node the package reads the
// deferred module from dist/ with the same loader; the state goes 'pending' -> 'loaded' with no
// call beyond the initial module, and the engine computes exactly afterwards.
import { describe, expect, it } from 'vitest';
import { loadEngine } from '../../../web/src/engine.js';

describe('loadEngine', () => {
  it('loads the deferred module in the background, without a call that needs it', async () => {
    const engine = await loadEngine();
    const { kiln } = engine;
    expect(['pending', 'loaded']).toContain(kiln.backendInfo().deferred);
    for (let i = 0; i < 200 && kiln.backendInfo().deferred !== 'loaded'; i++) await new Promise((r) => setTimeout(r, 10));
    expect(kiln.backendInfo().deferred).toBe('loaded');
    // cumsum is outside the initial module (tests/e2e/deferred.e2e.mjs); [[1, 2], [3, 4]]
    // along dim 1 is [[1, 3], [3, 7]] by hand.
    kiln.tidy(() => expect(kiln.Tensor.fromData([[1, 2], [3, 4]]).cumsum(1).toArray()).toEqual([[1, 3], [3, 7]]));
  });
});
