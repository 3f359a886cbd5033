// The packed package installs and runs outside this repository, as a user would get it:
// `npm pack` -> a scratch project that depends on the tarball -> `npm ci` -> the XOR example from
// examples/js/ run with node there (it exits non-zero unless it predicts 0 1 1 0).
// The scratch project installs offline with `npm ci` from a lockfile made of this repository's
// own entries for the package's dependencies (their tarballs are in npm's cache after
// scripts/setup.sh's `npm ci`): `npm install <tarball>` would need the registry's metadata of
// each dependency, which a machine that only ran `npm ci` has not cached.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
      'dist/kiln-mt.wasm', 'dist/kiln-mt-relaxed.wasm', 'dist/kiln-mt.mjs', 'dist/kiln-core.wasm', 'dist/kiln-core.mjs', 'package.json']) {
      expect(files).toContain(f);
    }
    // Only the package: no sources, tests or build directories.
    expect(files.filter((f) => !f.startsWith('dist/') && !/^(package\.json|README\.md|LICENSE)$/.test(f))).toEqual([]);

    const project = join(scratch, 'app');
    run('mkdir', ['-p', project], scratch);
    const tarball = readdirSync(scratch).find((f) => f.endsWith('.tgz'));
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
    const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8'));
    const spec = `file:../${tarball}`;
    const integrity = `sha512-${createHash('sha512').update(readFileSync(join(scratch, tarball))).digest('base64')}`;
    const packages = {
      '': { name: 'app', dependencies: { 'kiln-dl': spec } },
      'node_modules/kiln-dl': { version: pkg.version, resolved: spec, integrity, license: pkg.license, dependencies: pkg.dependencies },
    };
    for (const [path, entry] of Object.entries(lock.packages)) {
      if (path !== '' && !entry.dev && !entry.link) packages[path] = entry; // the runtime dependencies' tree
    }
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module', dependencies: { 'kiln-dl': spec } }));
    writeFileSync(join(project, 'package-lock.json'), JSON.stringify({ name: 'app', lockfileVersion: 3, requires: true, packages }));
    run('npm', ['ci', '--offline', '--no-audit', '--no-fund'], project);
    copyFileSync(join(root, 'examples', 'js', 'xor.mjs'), join(project, 'xor.mjs'));
    const result = run('node', ['xor.mjs'], project);
    expect(result).toMatch(/predictions \(manual loop\): 0 1 1 0/);
  }, 180_000);
});
