#!/usr/bin/env node
// Generates bindings/js/generated/engines.ts (not committed; scripts/build.sh runs this after
// the WebAssembly builds, before tsc): the entry points (Embind functions) and Sequential
// layer types of each engine profile (DESIGN.md "Engines"), read from the built engines
// themselves: dist/kiln.{mjs,wasm} (full), dist/kiln-core.{mjs,wasm} (core) and
// dist/kiln-core-inference.{mjs,wasm} (the engine of kiln-dl/inference). The JS
// layer (bindings/js/engine_profile.ts) uses what the full engine has and the core engine
// lacks (FULL_ONLY_*) to tell a user of the core engine that what they called is in the full
// engine (KilnError `State`), so no list is written by hand.
//
// Checks: the core engine's entry points and layer types are a subset of the full engine's
// (the core profile links a subset of the same binding TUs; CMakeLists.txt
// KILN_CORE_BINDINGS), and both engines' layer types keep the registry's order.
//
// Usage: node scripts/gen_engines.mjs [dist dir] [out.ts]. Writes only when the text
// changes (a no-op build stays a no-op); prints nothing unless it wrote.
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = resolve(process.argv[2] ?? join(root, 'dist'));
const outPath = resolve(process.argv[3] ?? join(root, 'bindings/js/generated/engines.ts'));

/** The Embind functions (they carry argCount or an overload table) and layer types of one engine. */
async function surface(name) {
  const js = join(dist, `${name}.mjs`);
  const wasm = join(dist, `${name}.wasm`);
  for (const f of [js, wasm]) {
    if (!existsSync(f)) throw new Error(`gen_engines: ${relative(root, f)} is missing (build it first: scripts/build.sh)`);
  }
  const { default: create } = await import(pathToFileURL(js).href);
  const m = await create({ wasmBinary: readFileSync(wasm), print() {}, printErr() {} });
  const functions = Object.keys(m)
    .filter((k) => typeof m[k] === 'function' && ('argCount' in m[k] || m[k].overloadTable !== undefined))
    .filter((k) => typeof m[k].prototype?.isAliasOf !== 'function') // Embind classes
    .sort();
  const layerTypes = m.layerTypes().map((t) => t.type);
  return { functions, layerTypes };
}

const full = await surface('kiln');
const core = await surface('kiln-core');
// kiln-dl/inference's engine: the core engine's binding TUs without the training ones, compiled
// without autodiff (KILN_JS_NO_AUTODIFF); the same entry points and layer types otherwise.
const inference = await surface('kiln-core-inference');
const notInCore = inference.functions.filter((f) => !core.functions.includes(f));
if (notInCore.length) throw new Error(`gen_engines: inference entry points missing from the core engine: ${notInCore.join(', ')}`);
if (inference.layerTypes.join() !== core.layerTypes.join()) {
  throw new Error(`gen_engines: the inference engine's layer types ${inference.layerTypes.join(', ')} differ from the core engine's ${core.layerTypes.join(', ')}`);
}
// The webgpu engine (issue 21: dist/kiln-webgpu.*): every binding of the full engine over the
// Wgpu backend, plus its read entry point tGpuReadInfo and the two halves of
// Optimizer.saveStateAsync's read (bindings/train_optim.cpp). Both ways are checked: an entry
// point of one engine missing from the other fails the build.
const webgpu = await surface('kiln-webgpu');
const WEBGPU_OWN = ['tGpuReadInfo', 'optimizerStatePartsList', 'optimizerStateBytes'];
const webgpuExtra = webgpu.functions.filter((f) => !full.functions.includes(f) && !WEBGPU_OWN.includes(f));
if (webgpuExtra.length) throw new Error(`gen_engines: webgpu entry points missing from the full engine: ${webgpuExtra.join(', ')}`);
const webgpuMissing = full.functions.filter((f) => !webgpu.functions.includes(f));
if (webgpuMissing.length) throw new Error(`gen_engines: full engine entry points missing from the webgpu engine: ${webgpuMissing.join(', ')}`);
// The webgpu engine registers every layer type of the full engine, in the same order.
if (webgpu.layerTypes.join() !== full.layerTypes.join()) {
  throw new Error(`gen_engines: the webgpu engine's layer types ${webgpu.layerTypes.join(', ')} differ from the full engine's ${full.layerTypes.join(', ')}`);
}
const notInFull = core.functions.filter((f) => !full.functions.includes(f));
if (notInFull.length) throw new Error(`gen_engines: core entry points missing from the full engine: ${notInFull.join(', ')}`);
const fullOrder = full.layerTypes.filter((t) => core.layerTypes.includes(t));
if (fullOrder.join() !== core.layerTypes.join()) {
  throw new Error(`gen_engines: core layer types ${core.layerTypes.join(', ')} are not a subsequence of the full engine's ${full.layerTypes.join(', ')}`);
}

const list = (xs) => `[\n${xs.map((x) => `  ${JSON.stringify(x)},`).join('\n')}\n]`;
const text = `// Generated by scripts/gen_engines.mjs from dist/kiln.wasm (full), dist/kiln-core.wasm (core) and
// dist/kiln-core-inference.wasm (kiln-dl/inference) and dist/kiln-webgpu.wasm: do not edit. See bindings/js/engine_profile.ts.

/** The full engine's entry points (Embind functions of bindings/*.cpp), sorted. */
export const FULL_FUNCTIONS: readonly string[] = ${list(full.functions)};

/** The full engine's Sequential layer types (snake_case), in registry order. */
export const FULL_LAYER_TYPES: readonly string[] = ${list(full.layerTypes)};

/** The core engine's entry points, sorted (a subset of FULL_FUNCTIONS). */
export const CORE_FUNCTIONS: readonly string[] = ${list(core.functions)};

/** The core engine's Sequential layer types, in registry order (a subsequence of FULL_LAYER_TYPES). */
export const CORE_LAYER_TYPES: readonly string[] = ${list(core.layerTypes)};
/**
 * FULL_FUNCTIONS without CORE_FUNCTIONS: what engine_profile.ts stubs in the core engine (the
 * only list it ships: a bundle leaves out the four above, which only tests read).
 */
export const FULL_ONLY_FUNCTIONS: readonly string[] = ${list(full.functions.filter((f) => !core.functions.includes(f)))};
/**
 * CORE_FUNCTIONS without the inference engine's (kiln-dl/inference: the core engine without the
 * Learner, optimizers and datasets): what engine_profile.ts installInferenceGaps stubs there.
 */
export const CORE_ONLY_FUNCTIONS: readonly string[] = ${list(core.functions.filter((f) => !inference.functions.includes(f)))};
/** FULL_LAYER_TYPES without CORE_LAYER_TYPES, in registry order: the layer types the core engine refuses by name. */
export const FULL_ONLY_LAYER_TYPES: readonly string[] = ${list(full.layerTypes.filter((t) => !core.layerTypes.includes(t)))};
`;

if (!existsSync(outPath) || readFileSync(outPath, 'utf8') !== text) {
  mkdirSync(dirname(outPath), { recursive: true });
  writeFileSync(`${outPath}.tmp`, text);
  renameSync(`${outPath}.tmp`, outPath);
  console.log(`gen_engines: wrote ${relative(root, outPath)} (full: ${full.functions.length} functions, ${full.layerTypes.length} layer types; core: ${core.functions.length}, ${core.layerTypes.length})`);
}
