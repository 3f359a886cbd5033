// The packed package installs and runs outside this repository, as a user would get it:
// `npm pack` -> a scratch project -> `npm install <tarball>` -> the XOR example from
// examples/js/ run with node there (it exits non-zero unless it predicts 0 1 1 0).
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const scratch = mkdtempSync(join(tmpdir(), 'kiln-pack-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const run = (cmd, args, cwd) =>
  execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 });

describe('npm pack', () => {
  it('installs into a scratch project and runs the XOR example there', () => {
    const out = run('npm', ['pack', '--json', '--pack-destination', scratch], root);
    const [info] = JSON.parse(out);
    const files = info.files.map((f) => f.path);
    for (const f of ['dist/index.js', 'dist/node.js', 'dist/index.d.ts', 'dist/kiln.wasm', 'dist/kiln.mjs',
      'dist/kiln-mt.wasm', 'dist/kiln-mt.mjs', 'dist/kiln-core.wasm', 'dist/kiln-core.mjs', 'package.json']) {
      expect(files).toContain(f);
    }
    // Only the package: no sources, tests or build directories.
    expect(files.filter((f) => !f.startsWith('dist/') && !/^(package\.json|README\.md|LICENSE)$/.test(f))).toEqual([]);

    const project = join(scratch, 'app');
    run('mkdir', ['-p', project], scratch);
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
    const tarball = readdirSync(scratch).find((f) => f.endsWith('.tgz'));
    run('npm', ['install', '--offline', '--no-audit', '--no-fund', join(scratch, tarball)], project);
    copyFileSync(join(root, 'examples', 'js', 'xor.mjs'), join(project, 'xor.mjs'));
    const result = run('node', ['xor.mjs'], project);
    expect(result).toMatch(/predictions \(manual loop\): 0 1 1 0/);
  }, 180_000);
});
