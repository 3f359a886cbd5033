// The Emscripten factory kiln-core.mjs (the core engine, built into dist/ next to index.js), for tsc.
import type { CreateModule } from './raw.js';

declare const createKilnCoreModule: CreateModule;
export default createKilnCoreModule;
