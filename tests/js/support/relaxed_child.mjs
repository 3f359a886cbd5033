// Run by tests/js/relaxed.test.mjs as `node --experimental-wasm-relaxed-simd relaxed_child.mjs`
// (Node 20's V8 validates relaxed SIMD only with that flag): compares the relaxed-SIMD build
// with the SIMD128 build (support/relaxed_checks.mjs) through the package's Node entry and
// prints the summary as one JSON line.
import { init } from '../../../dist/node.js';
import { compareBuilds } from './relaxed_checks.mjs';

process.stdout.write(`${JSON.stringify(await compareBuilds(init))}\n`);
