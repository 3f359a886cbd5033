// Vitest runs only the JS tests of the WebAssembly build (tests/js); the native suite
// runs through ctest (scripts/test.sh).
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// The suite runs on the full engine: `import { init } from 'kiln-dl'` in a file under
// tests/js/ resolves to tests/js/support/kiln_full.mjs, whose init() defaults to
// {engine: 'full'} (tests of the core engine pass {engine: 'core'}:
// tests/js/engine_core.test.mjs). Doc examples (build/readme-js/, ...) and child processes
// import the package itself, whose default is the core engine, as a user's page does.
const testsDir = fileURLToPath(new URL('./tests/js/', import.meta.url));
const fullEntry = fileURLToPath(new URL('./tests/js/support/kiln_full.mjs', import.meta.url));

export default defineConfig({
  plugins: [{
    name: 'kiln-dl-full-engine-for-tests',
    enforce: 'pre',
    resolveId(id, importer) {
      if (id === 'kiln-dl' && importer && importer.startsWith(testsDir) && importer !== fullEntry) return fullEntry;
      return null;
    },
  }],
  test: {
    include: ['tests/js/**/*.test.{js,mjs,ts}'],
    environment: 'node',
    testTimeout: 30_000,
    // Two workers, as ctest's -j2 (KILN_JOBS overrides both). Vitest's own default here
    // is one fewer than the cores, so on these 2-core machines it ran the 110 files one
    // after another: 466 s, against 233 s on two workers with no test slower.
    maxWorkers: Number(process.env.KILN_JOBS || 2),
  },
});
