// The generated declarations (dist/*.d.ts) type-check a --strict consumer of kiln.Module,
// kiln.Param and optimizer.step on any module (tests/js/types/module_consumer.ts), and
// reject the misuse marked @ts-expect-error there.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const tsc = fileURLToPath(new URL('../../node_modules/typescript/bin/tsc', import.meta.url));

describe('module declarations', () => {
  it('type-check the module consumer with --strict', () => {
    let output = '';
    try {
      execFileSync(process.execPath, [tsc, '-p', 'tests/js/types/tsconfig.module.json'], { cwd: root, encoding: 'utf8' });
    } catch (e) {
      output = `${e.stdout ?? ''}${e.stderr ?? ''}`;
    }
    expect(output).toBe('');
  }, 60_000);
});
