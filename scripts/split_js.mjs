// Splits each bundled browser entry's core chunk (scripts/minify_js.mjs: dist/index.chunk-core-*.js,
// dist/inference.chunk-core-*.js) into what its page runs and a deferred part, as
// scripts/split_wasm.mjs does for the engine (issue 17: what a page downloads to train an MLP).
// The JS layer's API is synchronous (kiln.nn.functional.conv2d(x, w) returns a tensor), so the
// part a page does not run cannot be an import(); instead:
//   1. Profile: scripts/size.mjs loads the train and the inference page in headless Chromium with
//      V8's block coverage on, each page also running a few tensor ops from JS (TENSOR_OPS); a
//      function never called is a candidate.
//   2. Each outermost candidate that can move (below) keeps its declaration (name, `async`, `*`,
//      kind, place in its class) with a stub body, `return $k(id, this, arguments, [v1, v2])`:
//      v1, v2 are the bindings of enclosing scopes the function reads (read when it is called,
//      so their current values). Its text goes to dist/<chunk>.deferred.txt as a factory,
//      `function(v1, v2) { return <the function> }`.
//   3. The first call of any stub (the runtime appended to the chunk, $k/$kL) reads that file
//      synchronously (browsers: a synchronous request, as deferred.ts reads the engine's
//      deferred module; Node: the file beside the chunk), evaluates it once with `new Function`
//      (Embind's glue does the same for every binding, so a page's CSP allows it already) and
//      calls the function from then on: `factory.apply(this, values).apply(this, args)`; an
//      arrow function's `this` is the factory's. The function a factory made is kept for the
//      next call with the same values (and, for an arrow, the same `this`): a stub's call costs
//      ~20 ns more than the original's, not ~100 ns (a new closure per call).
// A function can move when what it reads from outside is a binding (imports, module and enclosing
// functions' consts, parameters, functions and classes) that is never assigned after its
// declaration (scope analysis by eslint-scope on acorn's tree) or a global, and it has no
// `super`, `new.target`, `import.meta`, `import()` or private name (#x) — all of which mean
// something only in their place — and is no class constructor. Its stub is at least 40
// characters shorter than its text. Everything else stays as it was.
// The chunk's source map is rewritten for the new positions, and the deferred file gets its own
// (same sources). The unsplit chunk is kept in build/split/ so that a later run (after the
// engine changed, which changes what the pages run) splits it again from the same text.
//   node scripts/split_js.mjs [--force]     (run by scripts/build.sh after split_wasm.mjs)
// Without Chromium (scripts/setup.sh installs it) the chunks stay whole.
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import * as acorn from 'acorn';
import { analyze } from 'eslint-scope';
import { decodeMappings, encodeMappings } from './minify_js.mjs';
import { measure, REPO } from './size.mjs';

const dist = join(REPO, 'dist');
const work = join(REPO, 'build', 'split');
/** Which page's profile splits which entry's core chunk. */
const CHUNKS = [{ page: 'train', base: 'index' }, { page: 'inference', base: 'inference' }];
/** The runtime's names (checked to be unused in a chunk). */
const NAMES = ['$k', '$kD', '$kL', '$kA', '$kV', '$kE', '$kU', '$kF', '$kC', '$kQ', '$kM'];
const MARK = 'function $kL(';
/**
 * What the profile runs besides each size page's work: a few tensor ops from JS, so that the path
 * every JS tensor op takes (wrap, unwrap, track, dispose, the method guards, reads) stays in the
 * chunk a page loads first. The pages' Learner steps in the engine and never takes it; deferred,
 * it made a tiny op from JS 0.25-0.9 us slower (8 stub calls per op).
 */
const TENSOR_OPS = `{
  const a = kiln.Tensor.fromData([[1, 2], [3, 4]]);
  const outs = [a.add(a), a.sub(1), a.mul(2), a.div(a), a.matmul(a), a.relu(), a.exp(), a.neg(), a.sum(), a.mean(),
    a.reshape([4]), a.transpose(), kiln.tidy(() => a.add(1))];
  for (const t of outs) { (t.dataSync ? t.dataSync() : null); t.toArray?.(); t.dispose(); }
  a.dispose();
}`;
const MIN_SAVING = 40;

const mtime = (f) => (existsSync(f) ? statSync(f).mtimeMs : -Infinity);
const gz = (s) => gzipSync(s, { level: 9 }).length;

/**
 * What a function node reads from outside, or null if it cannot move: {module, local}, the
 * names of the module's bindings (a top-level class's own name counts as the module's) and of
 * enclosing functions' and blocks' bindings it reads.
 */
function freeBindings(scopeManager, fn) {
  // (inner: a named function expression's own name is then read from outside, as a local)
  const scope = scopeManager.acquire(fn, true);
  if (!scope) return null;
  const module = new Set();
  const local = new Set();
  for (const ref of scope.through) {
    const v = ref.resolved;
    if (v === null) continue; // a global: the same in the deferred file's scope
    if (ref.isWrite()) return null;
    // assigned after its declaration somewhere: a copy of its value would go stale
    if (v.references.some((r) => r.isWrite() && !r.init)) return null;
    const topClass = v.scope.type === 'class' && v.scope.upper?.type === 'module' && v.scope.block.type === 'ClassDeclaration';
    const isModule = v.scope.type === 'module' || topClass;
    if (!isModule) {
      // `arguments` cannot be a parameter of a strict factory
      if (v.name === 'arguments') return null;
      // a let/const/class declared after the function: read at a call it may still be in its TDZ
      const declared = v.identifiers[0]?.range?.[0] ?? -1;
      if (v.defs.some((d) => d.type !== 'Parameter' && d.type !== 'FunctionName' && d.type !== 'ImplicitGlobalVariable') && declared > fn.start) return null;
    }
    // a var written more than once (a loop's, a redeclared one): its value changes
    if (v.defs.some((d) => d.parent?.kind === 'var') && v.references.filter((r) => r.isWrite()).length > 1) return null;
    (isModule ? module : local).add(v.name);
  }
  return { module: [...module], local: [...local] };
}

/**
 * Visits `node` and its descendants (acorn's ESTree nodes) in source order: `enter(n, parent)`
 * returns false to skip n's children.
 */
function walk(node, enter, parent = null) {
  if (!node || typeof node.type !== 'string' || enter(node, parent) === false) return;
  for (const k in node) {
    const v = node[k];
    if (Array.isArray(v)) for (const c of v) walk(c, enter, node);
    else if (v && typeof v.type === 'string') walk(v, enter, node);
  }
}

/** True if some node under `roots` satisfies `test`; `skip(n)` leaves n's subtree out. */
function anyNode(roots, test, skip = () => false) {
  let found = false;
  for (const r of roots) {
    walk(r, (n) => {
      if (found) return false;
      if (test(n)) found = true;
      return !found && !skip(n);
    });
  }
  return found;
}

/** True if the arrow `fn` reads `this` (its own, i.e. outside nested non-arrow functions). */
function arrowThis(fn) {
  return anyNode([fn.body, ...fn.params], (n) => n.type === 'ThisExpression',
    (n) => n.type === 'FunctionExpression' || n.type === 'FunctionDeclaration');
}

/** True if `fn`'s text holds something that means something only in its place. */
function placeBound(fn) {
  const PLACED = new Set(['Super', 'MetaProperty', 'ImportExpression', 'PrivateIdentifier']);
  return anyNode([...fn.params, fn.body], (n) => PLACED.has(n.type));
}

/**
 * Splits one chunk. `called(fn)` tells whether the function node `fn` was called in the profile;
 * `keep(fn)`, whether it must stay regardless (kiln.loadDeferred's own code).
 * @returns {{code: string, deferred: string, edits: {start: number, end: number, text: string}[], moved: {start: number, end: number, at: number}[], count: number}}
 */
export function splitChunk(code, called, deferredName, { keep = () => false } = {}) {
  for (const n of NAMES) {
    if (new RegExp(`(^|[^\\w$])${n.replace(/\$/g, '\\$')}([^\\w$]|$)`).test(code)) throw new Error(`split_js: the chunk already uses the name ${n}`);
  }
  const ast = acorn.parse(code, { ecmaVersion: 'latest', sourceType: 'module', ranges: true });
  const scopeManager = analyze(ast, { ecmaVersion: 2022, sourceType: 'module' });
  const edits = [];
  const factories = [];
  const moduleNames = new Set();
  const moved = [];
  const isFn = (n) => n.type === 'FunctionDeclaration' || n.type === 'FunctionExpression' || n.type === 'ArrowFunctionExpression';
  const tryMove = (fn, parent) => {
    if (called(fn)) return false;
    if (keep(fn) || placeBound(fn)) return false;
    const free = freeBindings(scopeManager, fn);
    if (!free) return false;
    const id = factories.length;
    // Entry `id` of the deferred file: the function itself when it reads no local values (and,
    // an arrow, no `this`): the stub indexes the loaded array; else a factory over the local
    // values (an arrow's `this` is its factory's: keyed by `this` too), made through $k.
    const isArrow = fn.type === 'ArrowFunctionExpression';
    const direct = free.local.length === 0 && !(isArrow && arrowThis(fn));
    const get = direct ? `($kD??$kL())[${id}]` : isArrow ? `$k(${id},this,[${free.local.join(',')}],1)` : `$k(${id},this,[${free.local.join(',')}])`;
    const arrow = fn.type === 'ArrowFunctionExpression';
    // where the replaced text starts: an arrow entirely; otherwise its parameter list
    let start;
    if (arrow) start = fn.start;
    else {
      start = code.indexOf('(', fn.id ? fn.id.end : fn.start);
      if (start < 0 || (fn.params.length && start > fn.params[0].start)) return false;
    }
    let stub;
    const setter = parent?.kind === 'set';
    if (arrow) stub = `${fn.async ? 'async' : ''}(...$kA)=>${get}(...$kA)`;
    else {
      const plain = fn.params.every((p) => p.type === 'Identifier');
      const params = setter ? '($kV)' : plain ? code.slice(start, fn.body.start) : '()';
      const call = `${get}.apply(this,arguments)`;
      stub = `${params}{return ${fn.generator ? `yield*${call}` : call}}`;
    }
    const text = code.slice(start, fn.end);
    if (text.length - stub.length < MIN_SAVING) return false;
    const head = arrow ? '' : `${fn.async ? 'async ' : ''}function${fn.generator ? '*' : ''}`;
    for (const n of free.module) moduleNames.add(n);
    factories.push({ head, start, end: fn.end, free: free.local, direct });
    edits.push({ start, end: fn.end, text: stub });
    return true;
  };
  // the outermost functions that can move (a moved function's inner ones go with it)
  walk(ast, (n, parent) => !(isFn(n) && !(parent?.type === 'MethodDefinition' && parent.kind === 'constructor') && tryMove(n, parent)));
  // the runtime goes right after the leading imports (a stub called while the module is still
  // evaluating then finds it initialized)
  let importsEnd = 0;
  for (const st of ast.body) {
    if (st.type !== 'ImportDeclaration') break;
    importsEnd = st.end;
  }
  // the deferred file: "use strict";return function(m1,m2){return[function(v1,v2){return <fn>}, ...]},
  // called once with the module bindings' values (the chunk's $kM)
  const names = [...moduleNames];
  let deferred = `"use strict";return function(${names.join(',')}){return[`;
  factories.forEach((f, i) => {
    deferred += `${i ? ',' : ''}${f.direct ? '' : `function(${f.free.join(',')}){return `}${f.head}`;
    moved.push({ start: f.start, end: f.end, at: deferred.length });
    deferred += `${code.slice(f.start, f.end)}${f.direct ? '' : '}'}`;
  });
  deferred += ']}';
  let out = '';
  let from = 0;
  for (const e of edits) {
    out += code.slice(from, e.start) + e.text;
    from = e.end;
  }
  out += code.slice(from);
  return { code: out, deferred, edits, moved, count: factories.length, moduleNames: names, importsEnd };
}

/**
 * The runtime a split chunk ends with: $k (a stub's call: the deferred functions, read on the
 * first call by $kL), and an asynchronous loader of the same file registered under
 * Symbol.for('kiln.deferredJs'), which kiln.loadDeferred() runs (bindings/js/deferred.ts).
 */
export function runtime(deferredName, moduleNames = [], tag = '') {
  const fail = 'throw new $kE("Io",`engine: cannot load ${$kU.pathname.slice($kU.pathname.lastIndexOf("/")+1)}, the part of ' +
    'the package\'s JS that holds the function just called (what a page\'s first download leaves out to keep it small): ${e?.message??e}`)';
  return `import{KilnError as $kE}from"./errors.js";var $kD;const $kU=new URL(${JSON.stringify(`./${deferredName}`)},import.meta.url);` +
    // the module bindings the deferred functions read, read when the file is evaluated
    `function $kM(){return[${moduleNames.join(',')}]}` +
    // $k(i, s, v, r): the function factory i makes with local values v (and, for an arrow, r:
    // `this` s), kept until a call brings other values; $k(i) for one that reads none
    'var $kC=[];function $kQ(a,b){for(let k=0;k<a.length;k++)if(!Object.is(a[k],b[k]))return!1;return!0}' +
    'function $k(i,s,v,r){let c=$kC[i];if(c===void 0||r&&c.s!==s||!$kQ(c.v,v))c=$kC[i]={s,v,f:($kD??$kL())[i].apply(s,v)};return c.f}' +
    // (the file must be the one this chunk was split with: its first bytes are the tag)
    `function $kF(t){if(!t.startsWith(${JSON.stringify(tag)}))throw Error("it is not the file this chunk was split with (another build's)");` +
    'return Function(t+"\\n//# sourceURL="+$kU.href)().apply(void 0,$kM())}' +
    `${MARK}){try{let t;if(typeof XMLHttpRequest<"u"){const x=new XMLHttpRequest;x.open("GET",$kU.href,!1);` +
    'x.overrideMimeType("text/plain; charset=utf-8");x.send(null);' +
    'if(x.status!==200&&!(x.status===0&&$kU.protocol==="file:"))throw Error(`GET ${$kU.href}: HTTP ${x.status}`);t=x.responseText}' +
    `else t=process.getBuiltinModule("node:fs").readFileSync($kU,"utf8");return $kD??=$kF(t)}catch(e){${fail}}}` +
    '(globalThis[Symbol.for("kiln.deferredJs")]??=[]).push(async()=>{if($kD)return;let t;try{let s;' +
    'if($kU.protocol==="file:"&&typeof XMLHttpRequest>"u")s=process.getBuiltinModule("node:fs").readFileSync($kU,"utf8");' +
    'else{const r=await fetch($kU.href);if(!r.ok)throw Error(`GET ${$kU.href}: HTTP ${r.status}`);s=await r.text()}' +
    `t=$kF(s)}catch(e){${fail}}$kD??=t})`;
}

/** Offsets of the line starts of `text`. */
function lineStarts(text) {
  const out = [0];
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) out.push(i + 1);
  return out;
}

/** The segments of `map` as {at (offset in `code`), values} (values[0] is the generated column). */
function segmentsOf(map, code) {
  const starts = lineStarts(code);
  const out = [];
  decodeMappings(map.mappings).forEach((segs, line) => {
    for (const s of segs) out.push({ at: starts[line] + s.values[0], values: s.values });
  });
  return out;
}

/** Mappings for `text` from segments placed at offsets of it (sorted). */
function mappingsFor(text, placed) {
  const starts = lineStarts(text);
  const lines = starts.map(() => []);
  let line = 0;
  for (const { at, values } of placed.sort((a, b) => a.at - b.at)) {
    while (line + 1 < starts.length && starts[line + 1] <= at) line++;
    lines[line].push({ values: [at - starts[line], ...values.slice(1)] });
  }
  return encodeMappings(lines);
}

/** Splits dist/<file> (with its map), writing the split chunk, its deferred file and both maps. */
function writeSplit(file, coverage) {
  const path = join(dist, file);
  const text = readFileSync(path, 'utf8');
  const mapLine = /\n\/\/# sourceMappingURL=[^\n]*\s*$/;
  const code = text.replace(mapLine, '');
  const map = JSON.parse(readFileSync(`${path}.map`, 'utf8'));
  // Each function's own range (the first of its entry): a function was called if its count is
  // not 0. Matched to a node by its end and the nearest start at or before the node's (V8
  // starts a method's range at its name, acorn its function at the parameters).
  const byEnd = new Map();
  for (const f of coverage.functions) {
    const r = f.ranges[0];
    if (!byEnd.has(r.endOffset)) byEnd.set(r.endOffset, []);
    byEnd.get(r.endOffset).push(r);
  }
  const called = (fn) => {
    let best = null;
    for (const r of byEnd.get(fn.end) ?? []) if (r.startOffset <= fn.start && (!best || r.startOffset > best.startOffset)) best = r;
    return best === null || best.count > 0; // not reported: kept
  };
  const deferredName = file.replace(/\.js$/, '.deferred.txt');
  const segs = segmentsOf(map, code);
  // kiln.loadDeferred's own code (bindings/js/deferred.ts) stays: it exists to avoid the synchronous read
  const sourceAt = (at) => {
    let lo = 0;
    let hi = segs.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (segs[mid].at <= at) lo = mid;
      else hi = mid - 1;
    }
    return segs[lo] && segs[lo].at <= at ? map.sources[segs[lo].values[1]] : null;
  };
  const keep = (fn) => /(^|\/)deferred\.(js|ts)$/.test(sourceAt(fn.start) ?? '') || code.slice(fn.start, fn.end).includes('kiln.deferredJs');
  const split = splitChunk(code, called, deferredName, { keep });
  // the chunk: segments outside the replaced texts, shifted
  const placed = [];
  let e = 0;
  let shift = 0;
  for (const s of segs) {
    while (e < split.edits.length && split.edits[e].end <= s.at) {
      shift += split.edits[e].text.length - (split.edits[e].end - split.edits[e].start);
      e++;
    }
    const edit = split.edits[e];
    if (edit && s.at >= edit.start) continue; // inside a moved text
    placed.push({ at: s.at + shift, values: s.values });
  }
  const tag = `/*${createHash('sha256').update(split.deferred).digest('hex').slice(0, 16)}*/`;
  const rt = `\n${runtime(deferredName, split.moduleNames, tag)}\n`;
  const at = split.importsEnd;
  for (const p of placed) if (p.at >= at) p.at += rt.length;
  const out = `${split.code.slice(0, at)}${rt}${split.code.slice(at)}\n//# sourceMappingURL=${file}.map\n`;
  writeFileSync(`${path}.map`, JSON.stringify({ ...map, file, mappings: mappingsFor(out, placed) }));
  writeFileSync(path, out);
  // the deferred file: the moved texts' segments
  const dplaced = [];
  let m = 0;
  for (const s of segs) {
    while (m < split.moved.length && split.moved[m].end <= s.at) m++;
    const mv = split.moved[m];
    if (mv && s.at >= mv.start) dplaced.push({ at: tag.length + mv.at + (s.at - mv.start), values: s.values });
  }
  const deferredText = `${tag}${split.deferred}\n//# sourceMappingURL=${deferredName}.map\n`;
  writeFileSync(join(dist, deferredName), deferredText);
  // (';;': V8 evaluates a Function body two lines down, after "(function anonymous(" and ") {")
  writeFileSync(join(dist, `${deferredName}.map`), JSON.stringify({ ...map, file: deferredName, mappings: `;;${mappingsFor(deferredText, dplaced)}` }));
  return { before: gz(text), after: gz(out), deferred: gz(deferredText), count: split.count };
}

/** dist/<base>.chunk-core-*.js, the entry's core chunk (minify_js.mjs), or null. */
function coreChunk(base) {
  const files = readdirSync(dist).filter((f) => f.startsWith(`${base}.chunk-core-`) && f.endsWith('.js'));
  if (files.length > 1) throw new Error(`split_js: more than one core chunk of ${base}.js in dist/: ${files.join(', ')}`);
  return files[0] ?? null;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const force = process.argv.includes('--force');
  if (!existsSync('/usr/bin/chromium')) {
    console.log('[build] split_js: no /usr/bin/chromium (scripts/setup.sh installs it): the JS chunks stay whole');
    process.exit(0);
  }
  mkdirSync(work, { recursive: true });
  // What the pages run depends on the engines (their glue and initial modules) and this script.
  const inputs = readdirSync(dist).filter((f) => /^kiln-core.*\.(wasm|mjs)$/.test(f)).map((f) => join(dist, f))
    .concat([join(REPO, 'scripts', 'split_js.mjs'), join(REPO, 'scripts', 'size.mjs')]);
  const newest = Math.max(...inputs.map(mtime));
  const todo = [];
  for (const c of CHUNKS) {
    const file = coreChunk(c.base);
    if (!file) continue;
    const path = join(dist, file);
    const keep = join(work, file);
    if (readFileSync(path, 'utf8').includes(MARK)) {
      if (!existsSync(keep)) throw new Error(`split_js: dist/${file} is split but build/split/${file} (its unsplit text) is missing: run scripts/minify_js.mjs again (touch bindings/js/index.ts; bash scripts/build.sh)`);
      if (!force && mtime(path) > Math.max(newest, mtime(keep))) continue;
      copyFileSync(keep, path);
      copyFileSync(`${keep}.map`, `${path}.map`);
    } else {
      // (an earlier chunk's unsplit text goes: one kept per entry)
      for (const f of readdirSync(work)) if (f.startsWith(`${c.base}.chunk-core-`) && !f.startsWith(file)) rmSync(join(work, f));
      copyFileSync(path, keep);
      copyFileSync(`${path}.map`, `${keep}.map`);
    }
    todo.push({ ...c, file });
  }
  if (todo.length) {
    const t0 = Date.now();
    const measured = await measure(todo.map((c) => c.page), { coverage: true, extra: TENSOR_OPS });
    for (const c of todo) {
      const cov = measured[c.page].coverage.find((s) => s.url.endsWith(`/dist/${c.file}`));
      if (!cov) throw new Error(`split_js: the ${c.page} page did not load dist/${c.file}`);
      const r = writeSplit(c.file, cov);
      console.log(`[build] split_js ${c.file}: ${r.count} functions deferred: ${(r.before / 1000).toFixed(1)} -> ${(r.after / 1000).toFixed(1)} KB gzip -9 ` +
        `(+ ${(r.deferred / 1000).toFixed(1)} KB in ${c.file.replace(/\.js$/, '.deferred.txt')}, fetched on first use) (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
    }
  }
}
