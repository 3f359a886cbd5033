// Linked into dist/kiln-mt.mjs only (--pre-js, CMakeLists.txt): runs inside the module
// factory, where `Module` is the object given to createKilnModule. kilnPoolSize is the
// number of Web Workers Emscripten starts (and waits for) before the module runs:
// -sPTHREAD_POOL_SIZE=kilnPoolSize. The engine uses kilnThreads - 1 of them plus the
// calling thread; bindings/js/index.js sets Module.kilnThreads and calls setNumThreads
// once the module is ready. Without kilnThreads the pool is empty (1 thread).
var kilnPoolSize = Math.max(0, Math.min(64, (Module['kilnThreads'] | 0) - 1));
