// CONTRIBUTING.md's JavaScript examples are tests: each ```js block after a line
// `<!-- contributing-test-js -->` is written under build/contributing-js/ (inside the
// package, so `import ... from "kiln-dl"` resolves to this package) and imported; it must
// not throw. (Its C++ examples are ctest's contributing_example_<n>: cmake/readme_tests.cmake.)
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const text = readFileSync(join(root, 'CONTRIBUTING.md'), 'utf8');
const blocks = [...text.matchAll(/<!-- contributing-test-js -->\s*```js\n([\s\S]*?)\n```/g)].map(
  (m) => m[1],
);

describe('CONTRIBUTING JavaScript examples', () => {
  it('has the marked examples (an op from the op table, a layer from the registry)', () => {
    expect(blocks.length).toBeGreaterThanOrEqual(2);
  });

  blocks.forEach((code, i) => {
    it(`example ${i + 1} runs without throwing`, async () => {
      const dir = join(root, 'build', 'contributing-js');
      mkdirSync(dir, { recursive: true });
      const file = join(dir, `example_${i + 1}.mjs`);
      writeFileSync(file, `// Extracted from CONTRIBUTING.md by tests/js/contributing.test.mjs\n${code}\n`);
      await import(`${pathToFileURL(file).href}?t=${Date.now()}`);
    });
  });
});
