// README.md's JavaScript examples are tests: each ```js block after a line
// `<!-- readme-test-js -->` is written under build/readme-js/ (inside the package, so
// `import ... from "kiln-dl"` resolves to this package) and imported; it must not throw.
import { describe, expect, it } from 'vitest';
import { docExamples, runDocExample } from './support/doc_examples.mjs';

const blocks = docExamples('README.md', 'readme');

describe('README JavaScript examples', () => {
  it('has at least one marked example', () => {
    expect(blocks.length).toBeGreaterThan(0);
  });

  blocks.forEach((code, i) => {
    it(`example ${i + 1} runs without throwing`, async () => {
      await runDocExample('README.md', 'readme', code, i);
    });
  });
});
