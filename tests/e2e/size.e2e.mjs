// The size test of issue 17 (run by scripts/test.sh after the other browser suites;
// `node tests/e2e/size.e2e.mjs`, exit status 0 when every check passed): measures with
// scripts/size.mjs what a user's page fetches from dist/ (headless Chromium, native ES
// modules through an import map, every file gzip -9 on its own) for
//   train      init({threads: false}), an MLP from kiln.nn.sequential, one Learner epoch,
//              one trainBatch, an evaluation and model.config;
//   inference  kiln-dl/inference: tensors, the MLP's layers, SafeTensors bytes, forward;
// checks that each page did its work (the trained loss is finite; the forward output equals
// the product computed here in plain JS from the same weights) and that the sums stay under
// LIMITS: the ratchet (the numbers measured on the day the test was written + 2 %, so no
// change makes a page bigger unnoticed) until the budgets hold, then the budgets of the issue
// (200 KB for the training page, 120 KB for the inference page; KB = 1000 bytes). Prints the
// tables and writes test-output/size.json. Skips (exit 0) without /usr/bin/chromium.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { formatTable, measure, REPO } from '../../scripts/size.mjs';

const log = (line) => console.log(`[e2e size] ${line}`);

/** The budgets of issue 17, gzip -9 bytes summed over the files a page fetches. */
const BUDGETS = { train: 200_000, inference: 120_000 };
/**
 * What is enforced now (the ratchet): the pages as measured after configs and specs began to
 * cross into the engine as JS values instead of JSON text (2026-12-02, bindings/config_js.hpp:
 * no JSON parser runs on either page) + 2 %: train 260,730 bytes = kiln-core-relaxed.wasm
 * 205.9 KB + index.chunk-core 43.3 KB + kiln-core.mjs 10.8 KB + 0.6 KB; inference 200,191 bytes
 * = kiln-core-inference-relaxed.wasm 165.4 KB + inference.chunk-core 23.5 KB + kiln-core.mjs
 * 10.8 KB + 0.5 KB. Earlier: with the glue minified by Closure Compiler train 270,996, inference
 * 206,702; after the second round of issue 17 (the split engines) train 275,657, inference
 * 211,363; after the first round train 603,927, inference 578,780; before it both were
 * 1,126,216 (kiln.wasm 974.2 KB, kiln.mjs 17.1 KB, 54 JS modules 135 KB).
 * Inference since 2026-12-03: kiln-dl/inference loads its own engine, the core engine without
 * the Learner, optimizers and datasets (CMakeLists.txt), split for a workload that now also
 * covers the README's round trip (a model rebuilt from its config, seed, noGrad), which used
 * to fetch the 308 KB deferred module: 197,354 bytes + 2 % = kiln-core-inference-relaxed.wasm
 * 161.7 KB + inference.chunk-core 24.3 KB + kiln-core-inference.mjs 10.8 KB + 0.5 KB (the
 * core engine with the narrower workload: 202.1 KB; the new engine with it: 190.2 KB).
 * Since 2026-12-03 (round 6): a model's config reaches JS as a value, not nlohmann's JSON
 * text (bindings/config_js.hpp config_to_js), so the round trip no longer pulls the JSON
 * serializer into the inference engine's initial module: 193,894 bytes + 2 %. The training
 * page's workload grew to what the playground does (learner.trainBatch, learner.evaluate,
 * model.config, model.summary, optimizer.learningRate: each fetched the 366 KB deferred module
 * before): 265,837 bytes, inside its ratchet (265,945) with 0.1 KB to spare.
 * Since 2026-12-03 (issue 21, the webgpu backend): Tensor.data() and .array(), the asynchronous
 * reads every backend has, and the webgpu engine's part of the engine profile are in the
 * training page's JS (+0.4 KB); the rest of the webgpu backend's JS (asking for a GPU, loading
 * kiln-webgpu.*) is a chunk only init({ backend: 'webgpu' | 'auto' }) imports: 266,272 bytes.
 * Then the Cpu backend's argument checks became functions both backends call (elementwise,
 * reduce, shape, index, pool and conv checks; one implementation of each check): the core
 * engine's initial module +0.4 KB: 266,693 bytes, ratchet 266,800.
 * Then training on the webgpu backend (its Learner reads the loss every batchesPerCall steps:
 * learner.ts's settle of the device totals; the losses' host checks through data_for_check;
 * StepItem's device count): 267,014 bytes (+0.3 KB), ratchet 267,100.
 * Then the webgpu engine took every binding (engine_profile's webgpu stubs went: -50 B), and
 * saving a model trained on the GPU came (Module.saveSafetensorsAsync, kiln.io's async savers
 * through it, writeNamedMpk's State naming writeNamedMpkAsync; their reads are in io_store's
 * lazy chunk) with Learner.fit naming GPU errors: 267,194 bytes (+0.2 KB), ratchet 267,300.
 * Then norm clipping on the device (the core engine's clipGradNormDevice binding and
 * clip_grad_norm_on_device; clipGradNormAsync itself is a lazy chunk, optim_async.ts), the
 * webgpu Learner's general path (its async steps are in learner_fit's lazy chunk; the host
 * views' sync-read check stays in core), Optimizer.saveStateAsync, and the built-in path's
 * settling of steps after a failed read (a device check's Index): 267,498 bytes (+0.3 KB),
 * ratchet 267,600.
 * Since 2026-12-04 (issue 17, round 7): the data only deferred functions use moves to the
 * deferred module (scripts/split_data.mjs, by wasm-ld's map of each link): the training page's
 * engine 210.9 -> 190.0 KB, the inference page's 158.3 -> 146.6 KB: train 246,568 bytes,
 * inference 182,989 bytes; ratchets 246,700 and 183,100. Then each optimizer and schedule kind is
 * made out of line (call_apart in train_optim.cpp: the page makes adam, adamW, sgd and a
 * constant rate; the other kinds left its module): train 245,268 bytes, ratchet 245,400.
 * Then the placeholder imports went (scripts/split_stubs.mjs: one stub per signature in the
 * table, trampolines made at init() by deferred.ts's installPlaceholders): the training page's
 * engine 188.6 -> 176.3 KB, the inference page's 146.6 -> 136.6 KB: train 233,927 bytes,
 * inference 173,555 bytes; ratchets 234,100 and 173,700. Then the initial modules' functions in
 * an order gzip compresses better (scripts/reorder_wasm.mjs: by body size, then first bytes):
 * train 229,420 bytes, inference 169,347 bytes. Then the bundles with Oxc's compression pass
 * (scripts/minify_js.mjs): train 229,043 bytes, inference 169,093 bytes. Then str_cat's
 * appenders out of line (engine/src/core/str_cat.cpp: std::to_chars and snprintf were inlined
 * into every message): train 226,503 bytes, inference 167,752 bytes; ratchets 226,700 and
 * 167,900.
 * Since 2026-12-04 (issue 17, round 9): 734 sites of `throw E(str_cat(...))` build their message out
 * of line (throw_error in kiln/core/str_cat.hpp), so each throw site in an initial module is one
 * call: train 220.6 KB, inference 164.7 KB. Then the single-thread engines allocate with
 * emmalloc instead of dlmalloc: train 217,943 bytes, inference 161,607 bytes; ratchets 218,100
 * and 161,800.
 * Since 2026-12-04 (issue 17, round 10): the autodiff rules record through one out-of-line
 * record_inputs (214.8 KB), shape helpers without heap vectors and reshape's errors out of line
 * (212.9), a Sequential registration is one call (212.6), and a message literal that an initial
 * module's function only hands to a deferred function (its out-of-line thrower) moves to the
 * deferred module (split_data.mjs): train 209,783 bytes, inference 157,866 bytes. Then the core
 * engines' size-first files compile with -Oz instead of -Os, and config_js, core/error, io,
 * print and str_cat join them: train 208,083 bytes, inference 155,611 bytes; ratchets 208,200
 * and 155,750.
 * Since 2026-12-04 (issue 17, round 11): the functions of the JS layer's core chunks that a page
 * does not run move to <chunk>.deferred.txt (scripts/split_js.mjs, by V8's coverage of these
 * pages), read on the first call of one: index.chunk-core 45.5 -> 24.5 KB, inference.chunk-core
 * 25.5 -> 15.5 KB: train 187,108 bytes (the budget holds), inference 145,673 bytes. Then the split's
 * profile also runs a few tensor ops from JS (a tiny op from JS took 8 stubs), kiln.loadDeferred's
 * own code stays, and what a review found unsafe to move stays (TDZ, an arrow's arguments, var
 * loops): train 189,747 bytes, inference 147,163 bytes; ratchets 190,700 and 148,000.
 * Since 2026-12-05 (round 12): a constant the code only compares with, or loads from directly,
 * no longer keeps data it does not name (scripts/split_data.mjs: libc's __log_data and
 * __rem_pio2_large left the initial modules), random()'s normal samples are out of line, and
 * the glue reads only the module options the package passes (-sINCOMING_MODULE_JS_API):
 * train 188,487 bytes, inference 137,918 bytes with -sTEXTDECODER=2 as well. A review then found
 * a table walked backwards from its end whose start the code only compares with: a constant one
 * past an object's end keeps it now; and TEXTDECODER=2 was dropped (every short string through
 * TextDecoder): train 189,224 bytes, inference 138,746 bytes; ratchets 189,800 and 139,300.
 * Since 2026-12-05 (round 13): kiln-dl/inference's engine has no autodiff (its binding TUs and
 * Sequential registry compiled again with KILN_JS_NO_AUTODIFF: tensors and models on Cpu, as
 * Burn's inference): inference 130,018 bytes. Then the SafeTensors header is read into a
 * config::Value instead of nlohmann's DOM: train 189,199 bytes, inference 126,508 bytes; then
 * through config::ValueBuilder, which config::parse and configs from JS use too (its own copy of
 * the builder went): train 189,250 bytes, inference 126,070 bytes; ratchet 126,600.
 * Since 2026-12-05 (round 14): Embind's glue without wide strings and smart-pointer arguments
 * (bindings/embind_trim.js), once-per-call bindings at minsize, a scaled index's base no longer
 * keeps the object ending there (split_data.mjs), the functions only the deferred module calls
 * in table slots instead of exports (split_slots.mjs), GEMM packing's edge loops and the
 * kernels' tail loops left scalar, the shape TUs without vectorizer and unroller, no
 * -sSPLIT_MODULE glue: train 182,131 bytes, inference 119,534 bytes; a review then kept the end
 * rule for a scaled index that is a subtraction (reads backwards): inference 119,549 bytes. The
 * inference page holds its budget, which is its limit now; the training page keeps a ratchet.
 * Lower these as the pages shrink; switch each to BUDGETS[page] once it holds.
 */
const LIMITS = { train: 183_000, inference: 120_000 };

const chromiumPath = process.env.KILN_CHROMIUM ?? '/usr/bin/chromium';
if (!existsSync(chromiumPath)) {
  log(`skipped: no Chromium at ${chromiumPath}`);
  process.exit(0);
}
if (!existsSync(join(REPO, 'dist/index.js'))) {
  console.error('[e2e size] dist/index.js is missing: run scripts/build.sh first');
  process.exit(1);
}

let failed = 0;
const check = (ok, line) => {
  log(`${ok ? 'ok  ' : 'FAIL'} ${line}`);
  if (!ok) failed++;
};

/** The inference page's MLP (8 -> 16 -> relu -> 3) in plain JS, with the page's weights. */
function expectedForward(rows) {
  const weights = (count, bias) => Array.from({ length: count }, (_, k) => (bias ? 0.1 : ((k % 7) - 3) / 8));
  const w0 = weights(16 * 8, false), b0 = weights(16, true), w2 = weights(3 * 16, false), b2 = weights(3, true);
  const out = [];
  for (const x of rows) {
    const h = b0.map((b, i) => Math.max(0, b + x.reduce((s, v, j) => s + w0[i * 8 + j] * v, 0)));
    for (let o = 0; o < 3; o++) out.push(b2[o] + h.reduce((s, v, j) => s + w2[o * 16 + j] * v, 0));
  }
  return out;
}

const result = await measure();
for (const [name, m] of Object.entries(result)) console.log(formatTable(name, m) + '\n');
mkdirSync(join(REPO, 'test-output'), { recursive: true });
writeFileSync(join(REPO, 'test-output/size.json'), JSON.stringify({ kb: 1000, pages: result }, null, 2) + '\n');

const { train, inference } = result;
check(Number.isFinite(train.result.loss) && train.result.loss > 0, `train page: one epoch ran, loss ${train.result.loss}`);
const want = expectedForward([[1, 0, 0, 0, 0, 0, 0, 0], [0.5, -0.5, 0.25, 0, 1, 0, -1, 0]]);
const got = inference.result.output;
const worst = Math.max(...want.map((w, i) => Math.abs(w - got[i])));
check(got.length === 6 && worst <= 1e-5, `inference page: forward of the loaded weights matches plain JS (max |diff| ${worst})`);
for (const [name, m] of Object.entries(result)) {
  check(m.files.some((f) => f.file.endsWith('.wasm')), `${name} page: fetched an engine (${m.files.filter((f) => f.file.endsWith('.wasm')).map((f) => f.file).join(', ')})`);
  // The profile workloads of scripts/split_profile.mjs (the engine) and of split_js.mjs (these
  // pages: the JS chunks) cover both pages: neither needs a deferred module or deferred JS.
  const deferred = m.files.filter((f) => /\.deferred\.(wasm|txt)$/.test(f.file)).map((f) => f.file);
  check(deferred.length === 0, `${name} page: no deferred module or deferred JS fetched${deferred.length ? ` (fetched ${deferred.join(', ')})` : ''}`);
  const limit = LIMITS[name];
  const kind = limit <= BUDGETS[name] ? 'budget' : 'ratchet';
  check(m.total.gzip <= limit,
    `${name} page: ${m.files.length} files, ${(m.total.gzip / 1000).toFixed(1)} KB gzip -9 (${m.total.gzip} B) <= ${(limit / 1000).toFixed(1)} KB (${kind}; budget ${BUDGETS[name] / 1000} KB${m.total.gzip <= BUDGETS[name] ? ': holds' : ''})`);
}
if (failed) {
  console.error(`[e2e size] ${failed} check(s) failed`);
  process.exit(1);
}
log('all checks passed');
