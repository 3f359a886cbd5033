// The Emscripten factory kiln-webgpu.mjs (the webgpu engine, built into dist/ next to index.js), for tsc.
import type { CreateModule } from './raw.js';

declare const createKilnWebgpuModule: CreateModule;
export default createKilnWebgpuModule;
