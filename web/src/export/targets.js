// The Export menu's entries: for each target the file it writes, how to run it, and its
// generator (pure functions of an export set-up, setup.js).
import { pytorchScript } from './pytorch.js';
import { kilnJsScript } from './kilnjs.js';
import { kilnCppProgram } from './kilncpp.js';

/** The MNIST directory option of the run lines (the four IDX files; ./mnist by default). */
const mnistDir = (s) => (s.mnist ? ' --mnist-dir DIR' : '');

/**
 * @type {Record<'pytorch' | 'kilnjs' | 'kilncpp', {label: string, ext: string, mime: string,
 *   generate: (setup: object) => string, run: (setup: object) => string[]}>}
 */
export const TARGETS = {
  pytorch: {
    label: 'PyTorch',
    ext: '.py',
    mime: 'text/x-python',
    generate: pytorchScript,
    run: (s) => [`python3 ${s.name}.py --weights ${s.name}.safetensors${mnistDir(s)}`, `python3 ${s.name}.py${mnistDir(s)}   # train from scratch`],
  },
  kilnjs: {
    label: 'Kiln JS',
    ext: '.mjs',
    mime: 'text/javascript',
    generate: kilnJsScript,
    run: (s) => ['npm install kiln-dl', `node ${s.name}.mjs --weights ${s.name}.safetensors${mnistDir(s)}`, `node ${s.name}.mjs${mnistDir(s)}   # train from scratch`],
  },
  kilncpp: {
    label: 'Kiln C++',
    ext: '.cpp',
    mime: 'text/x-c++src',
    generate: kilnCppProgram,
    run: (s) => [
      `g++ -std=c++20 -O2 -I$KILN/engine/include ${s.name}.cpp $KILN/build/native/libkiln.a -lsqlite3 -lcsv -o ${s.name}`,
      `./${s.name} --weights ${s.name}.safetensors${mnistDir(s)}`,
    ],
  },
};

/** The file name of a target's program for a set-up ("kiln_xor.py"). */
export const programFile = (setup, target) => `${setup.name}${TARGETS[target].ext}`;

export { weightsFile } from './setup.js';
