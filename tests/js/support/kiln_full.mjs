// The package as the JS tests see it (vitest.config.mjs resolves `kiln-dl` here for files
// under tests/js/): everything kiln-dl's Node entry exports, with init() loading the full
// engine unless the options name one (`init({ engine: 'core' })`). The package's own default
// is the core engine (README "Core and full engine").
import { init as initEngine } from '../../../dist/node.js';

export * from '../../../dist/node.js';

/** kiln-dl's init() with `engine: 'full'` as the default. */
export function init(options = {}) {
  return initEngine({ engine: 'full', ...options });
}
