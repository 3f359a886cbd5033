// README.md's JavaScript examples are tests: each ```js block after a line
// `<!-- readme-test-js -->` is written under build/readme-js/ (inside the package, so
// `import ... from "kiln-dl"` resolves to this package) and imported; it must not throw.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const readme = readFileSync(join(root, 'README.md'), 'utf8');
const blocks = [...readme.matchAll(/<!-- readme-test-js -->\s*```js\n([\s\S]*?)\n```/g)].map(
  (m) => m[1],
);

describe('README JavaScript examples', () => {
  it('has at least one marked example', () => {
    expect(blocks.length).toBeGreaterThan(0);
  });

  blocks.forEach((code, i) => {
    it(`example ${i + 1} runs without throwing`, async () => {
      const dir = join(root, 'build', 'readme-js');
      mkdirSync(dir, { recursive: true });
      const file = join(dir, `example_${i + 1}.mjs`);
      writeFileSync(file, `// Extracted from README.md by tests/js/readme.test.mjs\n${code}\n`);
      await import(`${pathToFileURL(file).href}?t=${Date.now()}`);
    });
  });
});
