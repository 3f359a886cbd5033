// Datasets built by modules, for the DataLoader worker tests (tests/js/data_workers.test.mjs):
// each export is called with the args given to kiln.data.fromModule, on the main thread and
// in every worker.
import { threadId } from 'node:worker_threads';

/** Item i: {x: [i + offset, (i + offset)^2], y: i mod 3}. */
export default function squares(n, offset = 0) {
  return {
    length: n,
    get(i) {
      const v = i + offset;
      return { x: new Float32Array([v, v * v]), y: i % 3 };
    },
  };
}

/** Item i: {i, thread}: the worker thread that loaded it (0 is the main thread). */
export function threads(n) {
  return { length: n, get: (i) => ({ i, thread: threadId }) };
}

/** get(bad) throws a RangeError; other items are their index. */
export function failing(n, bad) {
  return {
    length: n,
    get(i) {
      if (i === bad) throw new RangeError(`row ${i} is corrupt`);
      return i;
    },
  };
}

/** Even items take a while (busy wait), so workers finish out of order. */
export function unevenCost(n) {
  return {
    length: n,
    get(i) {
      if (i % 2 === 0) {
        const until = Date.now() + 15;
        while (Date.now() < until) { /* busy */ }
      }
      return i;
    },
  };
}

/** Items that cannot be sent back to the main thread (a function). */
export function unsendable(n) {
  return { length: n, get: (i) => ({ i, f: () => i }) };
}

/** A mapper for MapperDataset: item * 10 + index. */
export function scaled(item, index) {
  return item * 10 + index;
}

export const notAFunction = 3;

/** Returns something that is not a dataset. */
export function notADataset() {
  return { size: 3 };
}
