// Linked into dist/kiln-mt.mjs only (--pre-js, CMakeLists.txt): runs inside the module
// factory, where `Module` is the object given to createKilnModule. kilnPoolSize is the
// number of Web Workers Emscripten starts (and waits for) before the module runs:
// -sPTHREAD_POOL_SIZE=kilnPoolSize. The engine uses kilnThreads - 1 of them plus the
// calling thread; bindings/js/index.ts sets Module.kilnThreads and calls setNumThreads
// once the module is ready. At least one worker: with an empty pool, Emscripten 3.1.6
// never releases its 'wasm-instantiate' run dependency (preamble.js), and the module would
// never finish loading.
var kilnPoolSize = Math.max(1, Math.min(64, (Module['kilnThreads'] | 0) - 1));
