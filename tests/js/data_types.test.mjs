// The declarations of kiln.data's pipeline and kiln.io (dist/data/*.d.ts, dist/io.d.ts,
// generated from the TypeScript) type-check a consumer under `tsc --noEmit --strict`
// (tests/js/data_fixtures/consumer.ts) and reject the misuse marked @ts-expect-error there.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const tsc = fileURLToPath(new URL('../../node_modules/typescript/bin/tsc', import.meta.url));

describe('data and io declarations', () => {
  it('type-check the consumer with --strict', () => {
    let output = '';
    try {
      execFileSync(process.execPath, [tsc, '-p', 'tests/js/data_fixtures/tsconfig.json'], { cwd: root, encoding: 'utf8' });
    } catch (e) {
      output = `${e.stdout ?? ''}${e.stderr ?? ''}`;
    }
    expect(output).toBe('');
  }, 60_000);
});
