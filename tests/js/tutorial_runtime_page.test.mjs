// The build-time side of the tutorial page (web/vite-tutorial.js): the page model of a
// step (prose and static code merged into HTML chunks, so a <details> solution stays one
// element; cells with their Burn/C++ pair) and every content step of the tutorial loading
// with its C++ regions.
import { describe, it, expect } from 'vitest';
import { join } from 'node:path';
import { pageStep, readTutorial, wasmVariants } from '../../web/vite-tutorial.js';
import { parseStep } from '../../web/src/tutorial/runtime/markdown.js';
import { ROOT } from './support/notebook_node.mjs';

const md = [
  '# Step 2 — Two',
  '',
  'Intro with `code`.',
  '',
  '```rust',
  'let x = 1;',
  '```',
  '',
  '```js cell=s02-a',
  'const x = 1;',
  '```',
  '',
  'Try it.',
  '',
  '<details><summary>Solution</summary>',
  '',
  '```js',
  'const y = "```";',
  '```',
  '',
  '</details>',
].join('\n');

describe('pageStep', () => {
  it('merges prose and static code into HTML chunks around the cells', () => {
    const page = pageStep(parseStep(md, { name: '02-two.md', readFile: () => '' }));
    expect(page).toMatchObject({ slug: '02-two', step: 2, title: 'Two' });
    expect(page.items.map((i) => i.type)).toEqual(['html', 'cell', 'html']);
    expect(page.items[0].html).toBe('<p>Intro with <code>code</code>.</p>\n');
    expect(page.items[1]).toEqual({ type: 'cell', id: 's02-a', code: 'const x = 1;', exercise: false, compare: { rust: { code: 'let x = 1;' }, cpp: null } });
    const html = page.items[2].html;
    // the solution's code is inside the <details>, its backticks intact
    expect(html.indexOf('<details>')).toBeLessThan(html.indexOf('<pre><code class="language-js">'));
    expect(html.indexOf('</details>')).toBeGreaterThan(html.indexOf('</code></pre>'));
    expect(html).toContain('const y = &quot;```&quot;;');
  });
});

describe('the tutorial content', () => {
  it('every step loads (C++ regions present) and numbers follow each other', () => {
    const steps = readTutorial(join(ROOT, 'web/tutorial/content'));
    if (steps.length === 0) return; // no content yet: tutorial_cells.test.mjs skips too
    expect(steps.map((s) => s.step)).toEqual(steps.map((_, i) => i + 1));
    const cells = steps.flatMap((s) => s.cells);
    expect(cells.length).toBeGreaterThanOrEqual(30); // the issue asks for at least 30
    for (const s of steps) expect(s.cells.filter((c) => c.exercise).length, `${s.name} has an exercise`).toBeGreaterThanOrEqual(1);
    for (const s of steps) for (const item of pageStep(s).items) if (item.type === 'cell' && item.compare?.cpp) expect(item.compare.cpp.code.length).toBeGreaterThan(0);
  });
});

describe('the service worker\'s engine pairs (wasmVariants)', () => {
  it('pairs each <name>-relaxed-<hash>.wasm with its <name>-<hash>.wasm, kiln and kiln-core and kiln-mt apart', () => {
    const files = ['index.html', 'assets/kiln-lUkWbWiS.wasm', 'assets/kiln-relaxed-C0LMLKat.wasm',
      'assets/kiln-core-CQHc41As.wasm', 'assets/kiln-core-relaxed-BzHdrdHn.wasm', 'assets/kiln-core.deferred-FzVklFE5.wasm',
      'assets/kiln-mt-DCwEo1K6.wasm', 'assets/kiln-mt-relaxed-C82WIvF_.wasm', 'assets/kiln-webgpu-HxTRYueZ.wasm',
      'assets/kiln-mt-DCwEo1K6.js', 'tutorial/assets/xor.pt'];
    expect(wasmVariants(files)).toEqual([
      ['assets/kiln-lUkWbWiS.wasm', 'assets/kiln-relaxed-C0LMLKat.wasm'],
      ['assets/kiln-core-CQHc41As.wasm', 'assets/kiln-core-relaxed-BzHdrdHn.wasm'],
      ['assets/kiln-mt-DCwEo1K6.wasm', 'assets/kiln-mt-relaxed-C82WIvF_.wasm'],
    ]);
    expect(wasmVariants(['assets/kiln-core-CQHc41As.wasm', 'assets/kiln-webgpu-HxTRYueZ.wasm'])).toEqual([]);
  });

  it('a relaxed .wasm without its SIMD128 twin fails the build (the worker would precache neither)', () => {
    expect(() => wasmVariants(['assets/kiln-relaxed-C0LMLKat.wasm', 'assets/kiln-core-CQHc41As.wasm']))
      .toThrow('serviceWorker: assets/kiln-relaxed-C0LMLKat.wasm needs one SIMD128 twin assets/kiln-<hash>.wasm, found 0');
  });
});
