// Minifies the package's JS layer in place after tsc has compiled it (run by scripts/build.sh
// right after tsc): every dist/**/*.js that tsc wrote becomes the same ES module without
// comments and whitespace, its local names shortened, with a source map beside it
// (x.js.map, holding tsc's output with its comments as the source; browsers fetch it only
// when the developer tools are open). Module structure, file names, exports, `import()`
// specifiers and `new URL('…', import.meta.url)` stay as they were: no compression pass, so
// constants are not inlined (a Node-only `import(specifier)` must not become a literal a
// bundler would try to resolve), string arguments of `import()` and `new URL()` are quoted
// again (Oxc prints them as template literals), and each `/* @vite-ignore */` of the source
// is put back into its `import()` (the source map shifted to match); function and class
// names are kept (`constructor.name` appears in messages). The .d.ts files, Emscripten's
// output (kiln*.mjs, kiln-mt.worker.js) and build.sh's kiln-mt-worker-source.js are not
// touched. The minifier is Oxc's, as Vite (a devDependency) ships it (`minifySync`).
// A file that already names a source map is skipped, so a second run changes nothing.
// The browser entries are then bundled (see BUNDLED below).
//   node scripts/minify_js.mjs [dist]      prints the files and their sizes before/after
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const REPO = resolve(fileURLToPath(new URL('..', import.meta.url)));
const SKIP = new Set(['kiln-mt.worker.js', 'kiln-mt-worker-source.js']);
const MAP_LINE = /\n\/\/# sourceMappingURL=[^\n]*\s*$/;

/** The tsc outputs under dir (every .js except Emscripten's and build.sh's files). */
function jsFiles(dir) {
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...jsFiles(path));
    else if (entry.name.endsWith('.js') && !SKIP.has(entry.name)) out.push(path);
  }
  return out;
}

const VITE_IGNORE = '/* @vite-ignore */';
const hintsIn = (source) => source.split(VITE_IGNORE).length - 1;

/**
 * Quotes the literal arguments of `import()` and `new URL()` again (same length, so the
 * map is unchanged) and puts `/* @vite-ignore *\/` back into every `import()` whose argument
 * is not a literal: `wanted` of them (as many as the sources had; at most that many in a
 * bundle), or an Error.
 */
export function restoreHints(code, mappings, wanted, file, { treeShaken = false } = {}) {
  code = code.replace(/(\bimport\(|\bnew URL\()`([^`$\\'\n]*)`/g, "$1'$2'");
  // rolldown keeps the comments itself; the minifier drops them.
  const kept = [...code.matchAll(/\bimport\(\s*\/\* @vite-ignore \*\//g)].length;
  const at = [...code.matchAll(/\bimport\((?![`'"]|\s*\/\*)/g)].map((m) => m.index + m[0].length);
  // A bundle may have dropped a module's unused import() (treeShaken): then at most `wanted`.
  const found = kept + at.length;
  if (treeShaken ? found > wanted : found !== wanted) {
    throw new Error(`minify_js: ${file}: ${wanted} ${VITE_IGNORE} in the source, ${found} import() of a non-literal in the output`);
  }
  if (wanted === 0) return { code, mappings };
  const shift = VITE_IGNORE.length + 1;
  const lineStarts = [0];
  for (let i = code.indexOf('\n'); i >= 0; i = code.indexOf('\n', i + 1)) lineStarts.push(i + 1);
  const lineOf = (pos) => lineStarts.findLastIndex((s) => s <= pos);
  const lines = decodeMappings(mappings);
  // A segment moves right by the comments inserted at or before its generated column.
  for (const pos of at) {
    const line = lineOf(pos);
    const col = pos - lineStarts[line];
    for (const seg of lines[line] ?? []) if (seg.col >= col) seg.shift += shift;
  }
  for (const segs of lines) for (const seg of segs) seg.values[0] += seg.shift;
  let out = '';
  let from = 0;
  for (const pos of at) {
    out += code.slice(from, pos) + VITE_IGNORE + ' ';
    from = pos;
  }
  return { code: out + code.slice(from), mappings: encodeMappings(lines) };
}

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/** Source map v3 mappings -> per line, segments of absolute values ({values, col, shift}). */
export function decodeMappings(mappings) {
  const state = [0, 0, 0, 0, 0];
  return mappings.split(';').map((line) => {
    state[0] = 0; // the generated column restarts on each line; the other fields carry over
    if (line === '') return [];
    return line.split(',').map((text) => {
      const values = [];
      let value = 0;
      let bit = 0;
      for (const ch of text) {
        const digit = B64.indexOf(ch);
        if (digit < 0) throw new Error(`minify_js: bad source map character ${JSON.stringify(ch)}`);
        value += (digit & 31) << bit;
        bit += 5;
        if (!(digit & 32)) {
          values.push(value & 1 ? -(value >>> 1) : value >>> 1);
          value = 0;
          bit = 0;
        }
      }
      for (let i = 0; i < values.length; i++) values[i] = state[i] += values[i];
      return { values, col: values[0], shift: 0 };
    });
  });
}

/** The inverse of decodeMappings (deltas, base-64 VLQ). */
export function encodeMappings(lines) {
  const state = [0, 0, 0, 0, 0];
  return lines.map((segs) => {
    state[0] = 0;
    return segs.map(({ values }) => values.map((v, i) => {
      let delta = v - state[i];
      state[i] = v;
      let vlq = delta < 0 ? (-delta << 1) | 1 : delta << 1;
      let text = '';
      do {
        let digit = vlq & 31;
        vlq >>>= 5;
        if (vlq > 0) digit |= 32;
        text += B64[digit];
      } while (vlq > 0);
      return text;
    }).join('')).join(',');
  }).join(';');
}

/**
 * Minifies every tsc output under `dir` in place.
 * @returns {{file: string, before: number, after: number, gzipBefore: number, gzipAfter: number}[]} the files minified
 * @throws Error naming the file if the minifier reports an error (nothing is written for it)
 */
export async function minifyDist(dir = join(REPO, 'dist')) {
  const { minifySync } = await import('vite');
  const done = [];
  for (const path of jsFiles(dir)) {
    const source = readFileSync(path, 'utf8');
    if (MAP_LINE.test(source)) continue; // minified by an earlier run
    const name = basename(path);
    const result = minifySync(name, source, { module: true, compress: false, mangle: { keepNames: true }, sourcemap: true });
    if (result.errors?.length) {
      throw new Error(`minify_js: ${relative(REPO, path)}: ${result.errors.map((e) => e.message).join('; ')}`);
    }
    const { code: body, mappings } = restoreHints(result.code.trimEnd(), result.map.mappings, hintsIn(source), relative(REPO, path));
    const map = { ...result.map, mappings, sources: [name.replace(/\.js$/, '.unminified.js')], sourcesContent: [source] };
    writeFileSync(`${path}.map`, JSON.stringify(map));
    const code = `${body}\n//# sourceMappingURL=${name}.map\n`;
    writeFileSync(path, code);
    done.push({
      file: relative(REPO, path),
      before: Buffer.byteLength(source),
      after: Buffer.byteLength(code),
      gzipBefore: gzipSync(source, { level: 9 }).length,
      gzipAfter: gzipSync(code, { level: 9 }).length,
    });
  }
  return done;
}

// ---- the browser entries, bundled ----
// A page imports dist/index.js (or dist/inference.js) and, unbundled, fetches each of the ~50
// modules it reaches, each gzipped on its own. Each browser entry is therefore also bundled
// (rolldown, as Vite ships it: the same minifier with its compression pass, tree-shaken) into
// dist/<entry>.chunk-core-<hash>.js (every module the entry imports statically; the entry
// file itself only re-exports it), plus a chunk per dynamic import() (the CSV and SQLite
// readers, the Learner's general fit loop, kiln.io's files and IndexedDB, the DataLoader's
// workers), written as dist/<entry>.chunk-<name>-<hash>.js, and rolldown's runtime chunk
// (its __name helper, which every chunk imports). Without the core group rolldown would put
// each set of modules shared by the entry and some lazy chunks into a chunk of its own, which
// a page then fetches as so many files. Lazy chunks import from the core chunk, never from
// the entry file (whose URL a page may spell differently). Left as imports of the module tree: errors.js (one
// KilnError class for every entry, the Node entry and the workers), Emscripten's glue
// (kiln*.mjs) and kiln-mt-worker-source.js. The Node entries (node.js, inference_node.js),
// the data loader's worker (data/worker.js) and every other module stay the module tree.
export const BUNDLED = ['index.js', 'inference.js'];
const KEEP_EXTERNAL = /(^|\/)(errors\.js|kiln[a-z-]*\.mjs|kiln-mt-worker-source\.js)$/;

/** The package's dependencies: the bare specifiers a bundle may import(). */
const DEPENDENCIES = new Set(Object.keys(JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')).dependencies ?? {}));

/** rolldown, the one Vite depends on (resolved from Vite's package, not a dependency of its own). */
async function loadRolldown() {
  const { createRequire } = await import('node:module');
  const { pathToFileURL } = await import('node:url');
  const fromVite = createRequire(createRequire(join(REPO, 'package.json')).resolve('vite/package.json'));
  return import(pathToFileURL(fromVite.resolve('rolldown')).href);
}

/**
 * Bundles each of BUNDLED from the (unminified) module tree in `dir`, in memory.
 * @returns {Promise<{entry: string, files: {name: string, code: string}[]}[]>} what writeBundles writes
 * @throws Error if an entry is already a bundle (run tsc first) or rolldown fails
 */
export async function bundleEntries(dir = join(REPO, 'dist')) {
  const { rolldown } = await loadRolldown();
  const out = [];
  for (const entry of BUNDLED) {
    const input = join(dir, entry);
    if (!existsSync(input)) continue;
    if (MAP_LINE.test(readFileSync(input, 'utf8'))) throw new Error(`minify_js: dist/${entry} is already minified: run tsc first`);
    const base = entry.replace(/\.js$/, '');
    const bundle = await rolldown({
      input,
      optimization: { inlineConst: false },
      external: (id) => !id.startsWith('.') && !id.startsWith('/') ? true : KEEP_EXTERNAL.test(id),
      plugins: [{
        name: 'kiln-data-worker-url',
        // data/workers.js starts data/worker.js by a URL relative to itself; in the bundle
        // (dist/) the same file is ./data/worker.js.
        transform(code, id) {
          if (!id.endsWith('/data/workers.js')) return null;
          const from = "new URL('./worker.js', import.meta.url)";
          if (!code.includes(from)) throw new Error('minify_js: data/workers.js no longer starts ./worker.js as expected');
          return { code: code.replaceAll(from, "new URL('./data/worker.js', import.meta.url)"), map: null };
        },
      }],
    });
    const { output } = await bundle.generate({
      // Oxc's compression pass (-0.4 KB gzip -9 on the training page). A Node-only
      // `import(specifier)` is inlined either way (rolldown itself already did, with
      // inlineConst off: io_store's `node:fs/promises`, workers' `node:worker_threads`), as a
      // template literal after the `/* @vite-ignore */` hint, which Vite honours; the check
      // below fails the build on any other literal import() than the package's own files and
      // its dependencies.
      // Class names are kept (`constructor.name` appears in messages; keepNames puts back the
      // names the bundle had to change, `Tensor$1`); function names are shortened as any
      // minifier does (-1.2 KB gzip -9 on the training page): in the bundled entries the
      // `.name` of a function declaration (kiln.tidy.name, kiln.optim.adam.name) is its short
      // name, as after a user's own Vite build; the Node module tree keeps every name.
      format: 'es', minify: { compress: true, mangle: { keepNames: { function: false, class: true } } }, keepNames: true, sourcemap: true,
      chunkFileNames: `${base}.chunk-[name]-[hash].js`,
      // The entry's static imports in one chunk (see above).
      codeSplitting: { groups: [{ name: 'core', tags: ['$initial'] }] },
    });
    await bundle.close();
    const files = [];
    for (const chunk of output) {
      if (chunk.type !== 'chunk') continue;
      const wanted = chunk.moduleIds.reduce((n, id) => n + (existsSync(id) ? hintsIn(readFileSync(id, 'utf8')) : 0), 0);
      // rolldown's runtime chunk comes without a map (no source of ours): an empty one.
      const map = chunk.map ?? { version: 3, file: chunk.fileName, sources: [], sourcesContent: [], names: [], mappings: '' };
      const { code: body, mappings } = restoreHints(chunk.code.replace(MAP_LINE, '').trimEnd(), map.mappings, wanted, `${entry}: ${chunk.fileName}`, { treeShaken: true });
      // No import() of a literal a browser bundler cannot resolve: only files of the package and
      // its dependencies, or (after Vite's hint) a Node built-in.
      for (const [, hint, , spec] of body.matchAll(/\bimport\(\s*(\/\*[^]*?\*\/\s*)?([`'"])([^`'"$]*)\2\s*\)/g)) {
        const nodeOnly = spec.startsWith('node:') && /@vite-ignore/.test(hint ?? '');
        if (!spec.startsWith('./') && !DEPENDENCIES.has(spec) && !nodeOnly) {
          throw new Error(`minify_js: ${entry}: ${chunk.fileName} imports '${spec}', which a bundler would try to resolve for the browser`);
        }
      }
      files.push({ name: chunk.fileName, code: `${body}\n//# sourceMappingURL=${chunk.fileName}.map\n` });
      files.push({ name: `${chunk.fileName}.map`, code: JSON.stringify({ ...map, mappings }) });
    }
    out.push({ entry, files });
  }
  return out;
}

/** Writes bundleEntries' files into `dir` (over the entries), removing older chunks of the same entries. */
export function writeBundles(bundles, dir = join(REPO, 'dist')) {
  for (const { entry, files } of bundles) {
    const prefix = `${entry.replace(/\.js$/, '')}.chunk-`;
    for (const name of readdirSync(dir)) if (name.startsWith(prefix)) rmSync(join(dir, name));
    for (const f of files) writeFileSync(join(dir, f.name), f.code);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const dir = resolve(process.argv[2] ?? join(REPO, 'dist'));
  const bundles = await bundleEntries(dir);
  const done = await minifyDist(dir);
  writeBundles(bundles, dir);
  for (const { entry, files } of bundles) {
    const js = files.filter((f) => !f.name.endsWith('.map'));
    console.log(`[minify] bundled ${entry}: ${js.map((f) => `${f.name} ${(gzipSync(f.code, { level: 9 }).length / 1000).toFixed(1)} KB gzip -9`).join(', ')}`);
  }
  const sum = (k) => done.reduce((s, f) => s + f[k], 0);
  console.log(`[minify] ${done.length} files: ${(sum('before') / 1000).toFixed(1)} -> ${(sum('after') / 1000).toFixed(1)} KB ` +
    `(gzip -9 each: ${(sum('gzipBefore') / 1000).toFixed(1)} -> ${(sum('gzipAfter') / 1000).toFixed(1)} KB)`);
}
