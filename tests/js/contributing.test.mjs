// CONTRIBUTING.md's JavaScript examples are tests: each ```js block after a line
// `<!-- contributing-test-js -->` is written under build/contributing-js/ and imported; it
// must not throw (tests/js/support/doc_examples.mjs). (Its C++ examples are ctest's
// contributing_example_<n>: cmake/readme_tests.cmake.)
import { describe, expect, it } from 'vitest';
import { docExamples, runDocExample } from './support/doc_examples.mjs';

const blocks = docExamples('CONTRIBUTING.md', 'contributing');

describe('CONTRIBUTING JavaScript examples', () => {
  it('has the marked examples (an op from the op table, a layer from the registry)', () => {
    expect(blocks.length).toBeGreaterThanOrEqual(2);
  });

  blocks.forEach((code, i) => {
    it(`example ${i + 1} runs without throwing`, async () => {
      await runDocExample('CONTRIBUTING.md', 'contributing', code, i);
    });
  });
});
