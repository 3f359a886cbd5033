// The TypeScript declarations of the models and training API (dist/train.d.ts, pulled in
// by dist/index.d.ts) type-check a consumer under `tsc --noEmit --strict`
// (tests/js/types/train_consumer.ts) and reject the misuse marked @ts-expect-error there.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const tsc = fileURLToPath(new URL('../../node_modules/typescript/bin/tsc', import.meta.url));

describe('train.d.ts', () => {
  it('type-checks the training consumer with --strict', () => {
    let output = '';
    try {
      execFileSync(process.execPath, [tsc, '-p', 'tests/js/types/tsconfig.train.json'], { cwd: root, encoding: 'utf8' });
    } catch (e) {
      output = `${e.stdout ?? ''}${e.stderr ?? ''}`;
    }
    expect(output).toBe('');
  }, 60_000);
});
