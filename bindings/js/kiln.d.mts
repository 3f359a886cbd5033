// The Emscripten factory kiln.mjs (built into dist/ next to index.js), for tsc.
import type { CreateModule } from './raw.js';

declare const createKilnModule: CreateModule;
export default createKilnModule;
