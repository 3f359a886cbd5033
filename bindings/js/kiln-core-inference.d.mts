// The Emscripten factory kiln-core-inference.mjs (the inference engine of kiln-dl/inference,
// built into dist/ next to inference.js), for tsc.
import type { CreateModule } from './raw.js';

declare const createKilnInferenceModule: CreateModule;
export default createKilnInferenceModule;
