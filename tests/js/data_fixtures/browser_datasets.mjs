// A dataset module for the browser test (tests/js/io_browser.test.mjs): loaded by the page
// and by the DataLoader's Web Workers. Item i records whether a worker made it.
export default function tagged(n) {
  const inWorker = typeof WorkerGlobalScope !== 'undefined' && globalThis instanceof WorkerGlobalScope;
  return { length: n, get: (i) => ({ x: new Float32Array([i, -i]), worker: inWorker ? 1 : 0 }) };
}

/** get(bad) throws. */
export function failing(n, bad) {
  return {
    length: n,
    get(i) {
      if (i === bad) throw new TypeError(`item ${i} is bad`);
      return i;
    },
  };
}
