// The Race's pure parts (web/src/race.js) and the charts' text alternative (chart-text.js).
import { describe, it, expect } from 'vitest';
import { decideWinner, describeSide } from '../../../web/src/race.js';
import { summarise, tableRows } from '../../../web/src/chart-text.js';

const side = (loss, accuracy, failed = null) => ({ failed, test: { loss, accuracy } });

describe('decideWinner', () => {
  it('prefers the higher test accuracy, then the lower test loss', () => {
    expect(decideWinner([side(0.5, 0.9), side(0.1, 0.8)])).toEqual({ winner: 0, reason: 'accuracy' });
    expect(decideWinner([side(0.5, 0.9), side(0.1, 0.9)])).toEqual({ winner: 1, reason: 'loss' });
    expect(decideWinner([side(0.2, null), side(0.3, null)])).toEqual({ winner: 0, reason: 'loss' });
  });

  it('calls equal results a tie and a failed side the loser', () => {
    expect(decideWinner([side(0.25, 1), side(0.25, 1)])).toEqual({ winner: null, reason: 'tie' });
    expect(decideWinner([side(0.1, 1, { step: 3 }), side(0.9, 0.1)])).toEqual({ winner: 1, reason: 'failed' });
    expect(decideWinner([side(0.1, 1, { step: 3 }), side(0.9, 0.1, { step: 5 })])).toEqual({ winner: null, reason: 'both-failed' });
  });
});

describe('describeSide', () => {
  it('names the optimizer and the settings that apply', () => {
    expect(describeSide({ opt: 'sgd', lr: 0.1, momentum: 0.9, batch: 16, wd: 0 })).toBe('SGD (momentum), lr 0.1, momentum 0.9, batch 16');
    expect(describeSide({ opt: 'adamw', lr: 0.001, momentum: 0.9, batch: 64, wd: 0.01 })).toBe('AdamW, lr 0.001, batch 64, weight decay 0.01');
    expect(describeSide({ opt: 'adam', lr: 0.03, batch: 10, wd: 0, reg: 'l2', regRate: 0.003 })).toBe('Adam, lr 0.03, batch 10, L2 0.003');
    expect(describeSide({ opt: 'adam', lr: 0.03, batch: 10, wd: 0, reg: 'l1', regRate: 0 })).toBe('Adam, lr 0.03, batch 10');
  });
});

describe('chart text', () => {
  const ds = [
    { label: 'Train loss', data: [{ x: 0.5, y: 0.7 }, { x: 1, y: 0.5 }, { x: 1.5, y: 0.4 }, { x: 2, y: 0.45 }] },
    { label: 'Test loss', data: [{ x: 0, y: 0.8 }, { x: 2, y: 0.42 }] },
  ];

  it('summarises the last and the best value of every curve', () => {
    expect(summarise(ds, (v) => v.toFixed(2), 'min')).toBe(
      'Train loss 0.45 at epoch 2.00 (lowest 0.40 at epoch 1.50). Test loss 0.42 at epoch 2.00 (lowest 0.42 at epoch 2.00).',
    );
    expect(summarise([{ label: 'x', data: [] }], String, 'max')).toMatch(/No points yet/);
  });

  it('tabulates evenly spaced epochs with each curve\'s nearest point', () => {
    const rows = tableRows(ds, 3);
    // epochs of all curves: 0, 0.5, 1, 1.5, 2 -> 0, 1, 2; spacing 1: a point counts within 0.5
    expect(rows.map((r) => r.epoch)).toEqual([0, 1, 2]);
    expect(rows.map((r) => r.values)).toEqual([
      [0.7, 0.8],
      [0.5, null],
      [0.45, 0.42],
    ]);
    expect(tableRows(ds, 12)).toHaveLength(5);
  });
});
