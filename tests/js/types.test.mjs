// The TypeScript declarations (dist/index.d.ts) type-check a consumer under
// `tsc --noEmit --strict` (tests/js/types/consumer.ts, resolved through the package's
// "exports" types condition), and reject misuse marked @ts-expect-error there.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const tsc = fileURLToPath(new URL('../../node_modules/typescript/bin/tsc', import.meta.url));

function runTsc(project) {
  try {
    execFileSync(process.execPath, [tsc, '-p', project], { cwd: root, encoding: 'utf8' });
    return { ok: true, output: '' };
  } catch (e) {
    return { ok: false, output: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

describe('index.d.ts', () => {
  it('type-checks the consumer with --strict', () => {
    const { ok, output } = runTsc('tests/js/types/tsconfig.json');
    expect(output).toBe('');
    expect(ok).toBe(true);
  }, 60_000);
});
