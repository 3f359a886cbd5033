// The generated declarations (dist/*.d.ts) type-check a --strict consumer of the Learner for
// any model, kiln.metrics, OneCycle / ReduceLROnPlateau, clipping, GradientsAccumulator and
// optimizer state (tests/js/types/learner_consumer.ts), and reject the misuse marked
// @ts-expect-error there.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const tsc = fileURLToPath(new URL('../../node_modules/typescript/bin/tsc', import.meta.url));

describe('learner declarations', () => {
  it('type-check the learner consumer with --strict', () => {
    let output = '';
    try {
      execFileSync(process.execPath, [tsc, '-p', 'tests/js/types/tsconfig.learner.json'], { cwd: root, encoding: 'utf8' });
    } catch (e) {
      output = `${e.stdout ?? ''}${e.stderr ?? ''}`;
    }
    expect(output).toBe('');
  }, 60_000);
});
