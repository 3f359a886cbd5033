// Vite plugins of the tutorial page (web/tutorial/):
// - tutorialContent(): the virtual module `virtual:kiln-tutorial` holding the steps parsed
//   at build time from web/tutorial/content/*.md (KILN_TUTORIAL_CONTENT: another directory,
//   e.g. the notebook's test fixture), with the C++ regions read from the repository (a
//   missing file or region fails the build) and the prose already rendered to HTML.
// - tutorialAssets(): the files cells read with `asset(name)` (web/tutorial/assets/, e.g.
//   xor.pt; not the scripts that generate them) are copied into the build as
//   tutorial/assets/<name>, so the service worker precaches them (the dev server serves
//   them from web/ itself).
// - serviceWorker(): writes <outDir>/sw.js at the end of a build: web/src/tutorial/sw.js
//   with the list of the built files to precache (the app shell: HTML, JS, CSS, wasm) and
//   a cache name derived from their contents. Each engine's SIMD128 and relaxed-SIMD (FMA)
//   .wasm are listed as a pair: the worker precaches the one init() will choose in this
//   browser (the same WebAssembly.validate probe as kiln-dl's select.ts) and stores the
//   other only if a page fetches it; the core engine's .wasm, which no page loads, is
//   stored the same way (5.13 -> 3.31 MB gzip to install in Chromium).
import { readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { join, relative, resolve } from 'node:path';
import { marked } from 'marked';
import { parseStep, checkTutorial } from './src/tutorial/runtime/markdown.js';
import { RELAXED_SIMD_PROBE } from '../dist/select.js';

const here = fileURLToPath(new URL('.', import.meta.url));
const ROOT = resolve(here, '..');
const VIRTUAL = 'virtual:kiln-tutorial';

const escapeHtml = (t) => String(t).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);

/**
 * The label above a static Burn or C++ block that stands alone (not beside a cell, where the
 * comparison panel names it): "Burn (Rust)", or "Kiln C++" and the file it comes from.
 */
function codeLabel(b) {
  if (b.lang === 'rust') return '\n\n<p class="code-label">Burn (Rust)</p>\n\n';
  if (b.lang !== 'cpp') return '';
  const file = b.file ? ` <span class="code-file">${escapeHtml(b.file)}</span>` : '';
  return `\n\n<p class="code-label">Kiln C++${file}</p>\n\n`;
}

/** A fenced block around `code` whose fence no line of the code can close. */
function fence(lang, code) {
  const longest = Math.max(2, ...(code.match(/`+/g) ?? []).map((s) => s.length));
  const f = '`'.repeat(longest + 1);
  return `\n\n${f}${lang}\n${code}\n${f}\n\n`;
}

/**
 * The page model of one parsed step: prose and static code merged into HTML chunks (so raw
 * HTML such as <details> around a solution stays one element), cells kept as cells.
 */
export function pageStep(step) {
  const items = [];
  let md = '';
  const flush = () => {
    if (md.trim()) items.push({ type: 'html', html: marked.parse(md) });
    md = '';
  };
  for (const b of step.blocks) {
    if (b.type === 'prose') md += b.markdown;
    else if (b.type === 'code') md += codeLabel(b) + fence(b.lang, b.code);
    else {
      flush();
      const compare = b.compare && {
        rust: b.compare.rust ? { code: b.compare.rust.code } : null,
        cpp: b.compare.cpp ? { code: b.compare.cpp.code, file: b.compare.cpp.file ?? null } : null,
      };
      items.push({ type: 'cell', id: b.id, code: b.code, exercise: b.exercise, compare });
    }
  }
  flush();
  return { slug: step.slug, step: step.step, title: step.title, items };
}

/** Reads and checks every step of a content directory. */
export function readTutorial(dir, onFile = () => {}) {
  let names = [];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith('.md')).sort();
  } catch {
    names = [];
  }
  const steps = names.map((name) => {
    const file = join(dir, name);
    onFile(file);
    return parseStep(readFileSync(file, 'utf8'), {
      name,
      readFile: (rel) => {
        const p = resolve(ROOT, rel);
        onFile(p);
        return readFileSync(p, 'utf8');
      },
    });
  });
  return checkTutorial(steps);
}

/** The tutorial's steps as a virtual module (see the file comment). */
export function tutorialContent() {
  const dir = resolve(ROOT, process.env.KILN_TUTORIAL_CONTENT ?? 'web/tutorial/content');
  return {
    name: 'kiln-tutorial-content',
    resolveId(id) {
      return id === VIRTUAL ? `\0${VIRTUAL}` : undefined;
    },
    load(id) {
      if (id !== `\0${VIRTUAL}`) return undefined;
      this.addWatchFile(dir);
      const steps = readTutorial(dir, (f) => this.addWatchFile(f)).map(pageStep);
      return `export default ${JSON.stringify(steps)};`;
    },
  };
}

/** The files of web/tutorial/assets/ that cells may read (generators and notes excluded). */
export function assetFiles(dir = resolve(ROOT, 'web/tutorial/assets')) {
  let names = [];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names.filter((n) => !/\.(py|md)$/.test(n) && !n.startsWith('.') && statSync(join(dir, n)).isFile()).sort();
}

/** Copies the tutorial's assets into the build (see the file comment). */
export function tutorialAssets() {
  const dir = resolve(ROOT, 'web/tutorial/assets');
  return {
    name: 'kiln-tutorial-assets',
    generateBundle() {
      for (const name of assetFiles(dir)) {
        this.emitFile({ type: 'asset', fileName: `tutorial/assets/${name}`, source: readFileSync(join(dir, name)) });
      }
    },
  };
}

function listFiles(dir, base = dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...listFiles(p, base));
    else out.push(relative(base, p).split('\\').join('/'));
  }
  return out;
}

/**
 * A built .wasm's path without Vite's content hash (`assets/kiln-mt-relaxed-C82WIvF_.wasm`
 * -> `assets/kiln-mt-relaxed`: 8 characters of [A-Za-z0-9_-]); undefined for other files.
 * @param {string} f a path relative to the build's root
 */
const wasmName = (f) => /^(.*)-[A-Za-z0-9_-]{8}\.wasm$/.exec(f)?.[1];

/**
 * The engines' [SIMD128, relaxed] .wasm pairs among the built files: every
 * `<name>-relaxed-<hash>.wasm` with its `<name>-<hash>.wasm` (Vite's 8-character content
 * hash). Throws if a relaxed file has no SIMD128 twin (the service worker would otherwise
 * precache neither correctly).
 * @param {string[]} files paths relative to the build's root
 * @returns {[string, string][]}
 */
export function wasmVariants(files) {
  const pairs = [];
  for (const f of files) {
    const name = wasmName(f);
    if (!name?.endsWith('-relaxed')) continue;
    const base = name.slice(0, -'-relaxed'.length);
    const twins = files.filter((g) => wasmName(g) === base);
    if (twins.length !== 1) throw new Error(`serviceWorker: ${f} needs one SIMD128 twin ${base}-<hash>.wasm, found ${twins.length}`);
    pairs.push([twins[0], f]);
  }
  return pairs;
}

/** Writes the service worker with the build's precache list (see the file comment). */
export function serviceWorker() {
  let outDir;
  let building = false;
  return {
    name: 'kiln-service-worker',
    configResolved(config) {
      outDir = resolve(config.root, config.build.outDir);
      building = config.command === 'build';
    },
    closeBundle: {
      order: 'post',
      handler() {
        if (!building) return;
        const all = listFiles(outDir)
          .filter((f) => f !== 'sw.js' && !f.startsWith('mnist/') && !f.endsWith('.map'))
          .sort();
        // Not precached: a page that uses them stores them in the same cache when it first
        // fetches them. The libraries kiln-dl imports only on first use
        // (kiln.data.SqliteDataset: sqlite-wasm, ~400 KB gzip; CsvDataset: papaparse), and
        // the core engine's .wasm (kiln-core*, ~530 KB gzip), which the bundle holds because
        // kiln-dl's index.js names it, but which no page of the site loads (the playground
        // and the tutorial's worker call init({ engine: 'full' })).
        const isLazy = (f) => /(^|\/)(sqlite3|sqlite-wasm|papaparse)[^/]*$/.test(f) ||
          /(^|\/)kiln-core(-relaxed)?(\.deferred)?$/.test(wasmName(f) ?? '');
        const files = all.filter((f) => !isLazy(f));
        const lazy = all.filter(isLazy);
        const precache = files.map((f) => (f.endsWith('index.html') ? f.replace(/index\.html$/, '') || './' : f));
        const variants = wasmVariants(files);
        const source = readFileSync(join(here, 'src/tutorial/sw.js'), 'utf8');
        const lists = `const PRECACHE = ${JSON.stringify(precache)};\nconst LAZY = ${JSON.stringify(lazy)};\n` +
          `const VARIANTS = ${JSON.stringify(variants)};\nconst RELAXED_SIMD_PROBE = new Uint8Array(${JSON.stringify([...RELAXED_SIMD_PROBE])});\n`;
        // The cache's name changes with any built file, the lists or the worker's own code,
        // so that an installed worker is replaced (and its cache dropped) by any of them.
        const hash = createHash('sha256').update(lists).update(source);
        for (const f of all) hash.update(f).update(readFileSync(join(outDir, f)));
        const head = `// Generated by web/vite-tutorial.js at build time.\n${lists}const VERSION = ${JSON.stringify(hash.digest('hex').slice(0, 16))};\n`;
        writeFileSync(join(outDir, 'sw.js'), head + source);
      },
    },
  };
}
