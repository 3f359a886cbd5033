// Splits each single-thread engine into the module a page loads at init() and a deferred module
// loaded on first use (issue 17: what a page downloads to train an MLP), with binaryen's
// wasm-split (Debian's binaryen; the tool Emscripten's -sSPLIT_MODULE runs, whose glue the engines
// do not need: the deferred module is loaded by bindings/js/deferred.ts; CMakeLists.txt).
//
//   node scripts/split_wasm.mjs [--force]      (run by scripts/build.sh after the JS layer is built)
//
// For each engine profile (kiln-core, kiln) that CMake linked, and each workload (ENGINES below):
//   1. The unsplit module: the link writes dist/<name>.wasm; a module that is not yet split (it
//      exports no stub, scripts/split_stubs.mjs) is moved to build/split/<name>.wasm (kept for
//      size reports).
//   2. Profile: `wasm-split --instrument`, then scripts/split_profile.mjs runs a page's workload on
//      the instrumented module through the package's Node entry and writes which functions ran.
//   3. Split: the functions that ran stay in dist/<name>.wasm (the primary module); every other
//      function moves to dist/<name>.deferred.wasm and its table slot holds a placeholder
//      import until the deferred module is instantiated (bindings/js/deferred.ts loads it on the
//      first call of a placeholder and writes the real functions into the shared table).
//   4. The relaxed-SIMD build (build/wasm[-core]-relaxed/relaxed/<name>.wasm, prototype
//      f32x4.fma opcodes, which binaryen 108 reads) is split with the SAME list of kept
//      functions, after checking that its types, imports and function signatures are those of
//      the SIMD128 module (so function i is the same function in both); its primary half is
//      rewritten by scripts/relax_wasm.mjs into dist/<name>-relaxed.wasm. Every function that
//      holds an FMA is kept in the primary module (added to the list when the profile did not
//      run it), so the two deferred halves are the same bytes: the relaxed engine loads
//      dist/<name>.deferred.wasm too (one file shipped, not two of ~1-3 MB), and the split
//      fails if the halves ever differ.
//   5. The data only deferred functions use moves to the deferred module too (scripts/split_data.mjs,
//      by wasm-ld's map of the link, build/<dir>/<name>.datamap). The move is checked by running the
//      workload once more on the unsplit module instrumented by binaryen's --instrument-memory
//      (split_profile.mjs --loads): none of its loads may read, and none of its stores write, a
//      moved byte.
// The split is redone when an input is newer than dist/<name>.deferred.wasm (or with --force).
// The threaded build (kiln-mt) is not split: its workers would each need the deferred module.
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { scanWasm } from './relax_wasm.mjs';
import { checkTouched, moveData, replaceData, sectionsOf } from './split_data.mjs';
import { slotImports } from './split_slots.mjs';
import { exportsOf, functionImports, STUB_PREFIX, stubPlaceholders } from './split_stubs.mjs';
import { reorderFunctions } from './reorder_wasm.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const work = join(root, 'build', 'split');
const force = process.argv.includes('--force');
const FEATURES = ['--enable-simd', '--enable-exception-handling', '--enable-bulk-memory', '--enable-sign-ext',
  '--enable-mutable-globals', '--enable-nontrapping-float-to-int'];
const scripts = ['split_wasm.mjs', 'split_profile.mjs', 'relax_wasm.mjs', 'split_data.mjs', 'split_stubs.mjs', 'split_slots.mjs', 'reorder_wasm.mjs'].map((f) => join(root, 'scripts', f));

// Each engine is split for a workload of scripts/split_profile.mjs: the package's main entry
// (dist/index.js, node.js) loads kiln-core.wasm or kiln.wasm, split for a page that trains;
// kiln-dl/inference (dist/inference.js, inference_node.js) loads kiln-core-inference.wasm, the
// inference engine (linked by the core build from the same objects without the Learner,
// optimizers and datasets: CMakeLists.txt), split for a page that only runs a trained model.
// Each engine has its own glue, dist/<name>.mjs.
const ENGINES = [
  { name: 'kiln-core', engine: 'core', buildDir: join(root, 'build', 'wasm-core'), relaxedDir: join(root, 'build', 'wasm-core-relaxed', 'relaxed'),
    variants: [{ suffix: '', workload: 'train', entry: 'node.js' }] },
  { name: 'kiln-core-inference', engine: 'core', buildDir: join(root, 'build', 'wasm-core'), relaxedDir: join(root, 'build', 'wasm-core-relaxed', 'relaxed'),
    variants: [{ suffix: '', workload: 'inference', entry: 'inference_node.js' }] },
  { name: 'kiln', engine: 'full', buildDir: join(root, 'build', 'wasm'), relaxedDir: join(root, 'build', 'wasm-relaxed', 'relaxed'),
    variants: [{ suffix: '', workload: 'train', entry: 'node.js' }] },
];

const mtime = (f) => (existsSync(f) ? statSync(f).mtimeMs : -Infinity);
const run = (cmd, args, opts = {}) => execFileSync(cmd, args, { stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 28, ...opts }).toString();
const gz = (f) => gzipSync(readFileSync(f), { level: 9 }).length;
const kb = (n) => `${(n / 1000).toFixed(1)} KB`;

/** The payloads of sections `ids` of a wasm binary (for the same-layout check). */
function sections(file, ids) {
  const b = readFileSync(file);
  const out = new Map();
  for (const sec of sectionsOf(b, file)) if (ids.includes(sec.id)) out.set(sec.id, b.subarray(sec.start, sec.end));
  return out;
}

function sameLayout(a, b) {
  // 1 type, 2 import, 3 function (the signature of every defined function).
  const sa = sections(a, [1, 2, 3]);
  const sb = sections(b, [1, 2, 3]);
  for (const id of [1, 2, 3]) {
    if (!sa.get(id) || !sb.get(id) || Buffer.compare(sa.get(id), sb.get(id)) !== 0) return id;
  }
  return 0;
}

let did = 0;
mkdirSync(work, { recursive: true });
for (const e of ENGINES) {
  const glue = join(dist, `${e.name}.mjs`);
  const fresh = join(dist, `${e.name}.wasm`);
  const unsplit = join(work, `${e.name}.wasm`);
  // (a split initial module exports its stubs, and one that a failed split left behind imports
  // placeholders; what the link wrote does neither)
  if (existsSync(fresh)) {
    const bytes = readFileSync(fresh);
    if (!exportsOf(bytes, fresh).some((x) => x.name.startsWith(STUB_PREFIX)) &&
        !functionImports(bytes).some((i) => i.module === 'placeholder')) {
      renameSync(fresh, unsplit);
      rmSync(join(work, `${e.name}.instrumented.wasm`), { force: true }); // (a failed run's, of the old link)
    }
  }
  if (!existsSync(glue) || !existsSync(unsplit)) continue; // this profile was not built
  const relaxedOrig = join(e.relaxedDir, `${e.name}.wasm`);
  const relaxedProto = join(work, `${e.name}-relaxed.proto.wasm`);
  if (mtime(relaxedOrig) > mtime(relaxedProto)) copyFileSync(relaxedOrig, relaxedProto);
  const relaxed = existsSync(relaxedProto);
  if (relaxed) {
    const bad = sameLayout(unsplit, relaxedProto);
    if (bad) {
      throw new Error(`split_wasm: ${relaxedProto} differs from ${unsplit} in section ${bad} (types, imports or function signatures): the kept list cannot be shared`);
    }
  }
  const instrumented = join(work, `${e.name}.instrumented.wasm`);
  for (const v of e.variants) {
    const base = `${e.name}${v.suffix}`;
    const primary = join(dist, `${base}.wasm`);
    const deferred = join(dist, `${base}.deferred.wasm`);
    const outputs = [primary, deferred, ...(relaxed ? [join(dist, `${base}-relaxed.wasm`)] : [])];
    // (shipped before the relaxed engine shared the SIMD128 deferred module)
    rmSync(join(dist, `${base}-relaxed.deferred.wasm`), { force: true });
    // wasm-ld's map of the link (CMakeLists.txt, scripts/link_map.mjs): where each object's data lies
    const mapFile = join(e.buildDir, `${e.name}.datamap`);
    if (!existsSync(mapFile)) throw new Error(`split_wasm: ${mapFile} is missing (the engine's link writes it): rebuild ${e.buildDir}`);
    const inputs = [unsplit, glue, join(dist, v.entry), mapFile, ...scripts, ...(relaxed ? [relaxedProto] : [])];
    const oldest = Math.min(...outputs.map(mtime));
    // dist/<name>-relaxed.wasm is also written (unsplit) by CMake's relax step: newer than its
    // deferred module means it was rewritten and needs splitting again.
    if (!force && oldest > Math.max(...inputs.map(mtime)) && (!relaxed || mtime(outputs[2]) <= mtime(outputs[1]) + 1)) continue;

    const t0 = Date.now();
    // 2. profile
    const profile = join(work, `${base}.profile`);
    if (!existsSync(instrumented)) run('wasm-split', ['--instrument', unsplit, '-o', instrumented, ...FEATURES]);
    run(process.execPath, [join(root, 'scripts', 'split_profile.mjs'), '--engine', e.engine, '--workload', v.workload,
      '--wasm', instrumented, '--out', profile]);
    // 3. split by the profile; -v prints the kept functions (binaryen's names: their indices)
    const log = run('wasm-split', [unsplit, `--profile=${profile}`, '-o1', primary, '-o2', deferred, '-v', ...FEATURES]);
    const kept = /^Keeping functions: (.*)$/m.exec(log);
    if (!kept) throw new Error('split_wasm: wasm-split -v printed no "Keeping functions:" line');
    const keepFile = join(work, `${base}.keep`);
    // binaryen's names of an unnamed module's functions: their indices among the defined ones
    const keep = new Set(kept[1].split(', '));
    if (relaxed) {
      // Functions holding an FMA stay in the primary module (see the file comment, step 4).
      const imported = WebAssembly.Module.imports(new WebAssembly.Module(readFileSync(unsplit)))
        .filter((i) => i.kind === 'function').length;
      const fma = scanWasm(readFileSync(relaxedProto)).touched.map((t) => String(t.index - imported));
      const missing = fma.filter((f) => !keep.has(f));
      for (const f of missing) keep.add(f);
      writeFileSync(keepFile, `${[...keep].join('\n')}\n`);
      if (missing.length > 0) {
        run('wasm-split', [unsplit, `--keep-funcs=@${keepFile}`, '-o1', primary, '-o2', deferred, ...FEATURES]);
        console.log(`[build] split ${base}: ${missing.length} functions with an FMA kept in the primary module too`);
      }
    } else {
      writeFileSync(keepFile, `${[...keep].join('\n')}\n`);
    }
    // 3b. the placeholder imports become stubs, one per signature (scripts/split_stubs.mjs)
    const stubs = stubPlaceholders(primary, FEATURES, deferred);
    // 3c. its functions in an order gzip compresses better (scripts/reorder_wasm.mjs)
    // (kept only where it is smaller: on the whole core engine, for one, the link's order wins)
    const original = readFileSync(primary);
    let reordered = reorderFunctions(original);
    const [gzOriginal, gzReordered] = [original, reordered.bytes].map((x) => gzipSync(x, { level: 9 }).length);
    if (gzReordered < gzOriginal) writeFileSync(primary, reordered.bytes);
    else reordered = null;
    console.log(`[build] split ${base}: functions reordered for gzip: ${kb(gzOriginal)} -> ${kb(gzReordered)} gzip -9` +
      `${reordered ? '' : ' (not smaller: the link\'s order kept)'}`);
    // 4. the relaxed build, split the same way
    if (relaxed) {
      const p = join(work, `${base}-relaxed.proto.primary.wasm`);
      const s = join(work, `${base}-relaxed.proto.deferred.wasm`);
      run('wasm-split', [relaxedProto, `--keep-funcs=@${keepFile}`, '-o1', p, '-o2', s, ...FEATURES, '--enable-relaxed-simd']);
      const relaxedStubs = stubPlaceholders(p, [...FEATURES, '--enable-relaxed-simd'], s);
      if (relaxedStubs.stubs !== stubs.stubs || relaxedStubs.slots.join() !== stubs.slots.join()) {
        throw new Error(`split_wasm: ${base}-relaxed's placeholder slots differ from ${base}'s`);
      }
      if (reordered) writeFileSync(p, reorderFunctions(readFileSync(p), { order: reordered.order }).bytes);
      const relax = join(root, 'scripts', 'relax_wasm.mjs');
      process.stdout.write(run(process.execPath, [relax, p, outputs[2], '--min-rewrites', '1']));
      if (!readFileSync(s).equals(readFileSync(deferred))) {
        throw new Error(`split_wasm: the deferred halves of ${base} and ${base}-relaxed differ although every FMA ` +
          `function is in the primary module: the relaxed engine could not share ${deferred.slice(dist.length + 1)}`);
      }
      rmSync(s);
    }
    // 4b. the functions only the deferred module calls: reached through table slots, not exports
    // (scripts/split_slots.mjs), in both initial modules alike
    const slots = slotImports({ primaries: [primary, ...(relaxed ? [outputs[2]] : [])], deferred, unsplit });
    console.log(`[build] split ${base}: ${slots.moved} functions the deferred module calls in table slots from ${slots.slot} instead of exports`);
    // 5. the data only deferred functions use moves to the deferred module (scripts/split_data.mjs):
    // what either primary module's code reaches stays (the relaxed build's code differs from the
    // SIMD128 build's beyond its FMAs: madd_is_relaxed() names another string)
    const relaxedPrimary = join(work, `${base}-relaxed.proto.primary.wasm`);
    const before = gz(primary);
    const moved = moveData({ mapFile, buildDir: e.buildDir, primary, deferred, features: FEATURES,
      alsoReaching: relaxed ? [[relaxedPrimary, [...FEATURES, '--enable-relaxed-simd']]] : [] });
    if (relaxed) {
      replaceData(outputs[2], moved);
      rmSync(relaxedPrimary);
    }
    // ... checked by running the workload again on the unsplit module with every load and store
    // reported (binaryen's --instrument-memory): it runs only primary functions, so it must not
    // read or write a moved byte
    const memcheck = join(work, `${base}.memcheck.wasm`);
    const accesses = join(work, `${base}.accesses.json`);
    run('wasm-opt', [unsplit, '--instrument-memory', '-o', memcheck, ...FEATURES]);
    run(process.execPath, [join(root, 'scripts', 'split_profile.mjs'), '--engine', e.engine, '--workload', v.workload,
      '--wasm', memcheck, '--loads', accesses, '--lo', String(moved.lo), '--hi', String(moved.hi)]);
    checkTouched(JSON.parse(readFileSync(accesses, 'utf8')), moved, base);
    rmSync(memcheck);
    console.log(`[build] split ${base}: ${stubs.placeholders} placeholder imports -> ${stubs.stubs} stubs (one per signature) in ${stubs.slots.length} table slots`);
    if (moved.endExempt.length > 0) {
      console.log(`[build] split ${base}: moved although a scaled index starts where they end (split_data.mjs): ${moved.endExempt.map((n) => n.replace(/^.*\(/, '(')).join(', ')}`);
    }
    console.log(`[build] split ${base}: ${(moved.moved / 1000).toFixed(1)} KB of data moved to the deferred module, ` +
      `${(moved.kept / 1000).toFixed(1)} KB kept, ${moved.farKept} of them named only by a far-back reference (primary ${kb(before)} -> ${kb(gz(primary))} gzip -9)`);
    if (relaxed) {
      // The deferred module is the split's last output (the freshness check above takes a
      // relaxed primary newer than it for CMake's unsplit rewrite of it).
      const now = new Date();
      utimesSync(deferred, now, now);
    }
    for (const f of outputs) {
      if (!f.includes('-relaxed') && !WebAssembly.validate(readFileSync(f))) throw new Error(`split_wasm: ${f} does not validate`);
    }
    const sizes = outputs.map((f) => `${f.slice(dist.length + 1)} ${kb(gz(f))}`).join(', ');
    console.log(`[build] split ${e.name}, ${v.workload} workload (unsplit ${kb(gz(unsplit))} gzip -9): ${sizes} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
    did++;
  }
  rmSync(instrumented, { force: true });
}
if (did === 0) console.log('[build] split: up to date');
