// Vitest runs only the JS tests of the WebAssembly build (tests/js); the native suite
// runs through ctest (scripts/test.sh).
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['tests/js/**/*.test.{js,mjs,ts}'],
    environment: 'node',
    testTimeout: 30_000,
  },
});
