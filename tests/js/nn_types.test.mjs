// The generated declarations (dist/*.d.ts) type-check a consumer of the layers, losses and
// kiln.nn.functional of issue 15 under `tsc --noEmit --strict` (tests/js/types/nn_consumer.ts),
// and reject the misuse marked @ts-expect-error there.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const tsc = fileURLToPath(new URL('../../node_modules/typescript/bin/tsc', import.meta.url));

describe('nn declarations', () => {
  it('type-check tests/js/types/nn_consumer.ts with --strict', () => {
    let output = '';
    try {
      execFileSync(process.execPath, [tsc, '-p', 'tests/js/types/tsconfig.nn.json'], { cwd: root, encoding: 'utf8' });
    } catch (e) {
      output = `${e.stdout ?? ''}${e.stderr ?? ''}`;
    }
    expect(output).toBe('');
  }, 60_000);
});
