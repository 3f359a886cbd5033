// The runnable JavaScript examples of a Markdown file (README.md, CONTRIBUTING.md): each
// ```js block after a line `<!-- <prefix>-test-js -->`. runDocExample writes one under
// build/<prefix>-js/ (inside the package, so `import ... from "kiln-dl"` resolves to this
// package) and imports it; it must not throw.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/** The code of the marked ```js blocks of `file` (relative to the repository root), in order. */
export function docExamples(file, prefix) {
  const text = readFileSync(join(root, file), 'utf8');
  const marker = new RegExp(`<!-- ${prefix}-test-js -->\\s*\`\`\`js\\n([\\s\\S]*?)\\n\`\`\``, 'g');
  return [...text.matchAll(marker)].map((m) => m[1]);
}

/** Writes example `index` (0-based) of `file` under build/<prefix>-js/ and imports it. */
export async function runDocExample(file, prefix, code, index) {
  const dir = join(root, 'build', `${prefix}-js`);
  mkdirSync(dir, { recursive: true });
  const out = join(dir, `example_${index + 1}.mjs`);
  writeFileSync(out, `// Extracted from ${file} by tests/js/support/doc_examples.mjs\n${code}\n`);
  await import(`${pathToFileURL(out).href}?t=${Date.now()}`);
}
