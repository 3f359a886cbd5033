// The script of a DataLoader's workers (Node worker_threads and browser module Web Workers;
// started by workers.ts): rebuilds the dataset from its description (plain.ts: arrays,
// columns, engine-drawn index arrays, module URLs), then loads the batches it is asked
// for: the items, collated into flat typed arrays when the loader uses the default
// batcher. No WebAssembly here: the main thread makes the tensors.
import { collate, type CollateOptions } from './collate.js';
import { errorData, type FromWorker, type ToWorker } from './protocol.js';
import { getItem, rebuild, type DatasetLike } from './plain.js';

interface Endpoint {
  post(msg: FromWorker, transfer: ArrayBuffer[]): void;
  listen(handler: (msg: ToWorker) => void): void;
}

async function endpoint(): Promise<Endpoint> {
  const g = globalThis as { process?: { versions?: { node?: string } } };
  if (typeof g.process?.versions?.node === 'string') {
    const specifier = 'node:worker_threads';
    const { parentPort } = (await import(/* @vite-ignore */ specifier)) as {
      parentPort: { postMessage(m: unknown, t?: unknown[]): void; on(ev: string, f: (m: unknown) => void): void };
    };
    return {
      post: (msg, transfer) => parentPort.postMessage(msg, transfer),
      listen: (handler) => parentPort.on('message', (m) => handler(m as ToWorker)),
    };
  }
  const self = globalThis as unknown as {
    postMessage(m: unknown, t?: unknown[]): void;
    addEventListener(ev: string, f: (e: { data: unknown }) => void): void;
  };
  return {
    post: (msg, transfer) => self.postMessage(msg, transfer),
    listen: (handler) => self.addEventListener('message', (e) => handler(e.data as ToWorker)),
  };
}

/**
 * v with every typed array replaced by a fresh copy (a view into a dataset's larger buffer
 * would otherwise be sent whole, and the dataset's own buffers must not be transferred);
 * the copies' buffers are added to `transfer`.
 */
function fresh(v: unknown, transfer: ArrayBuffer[], depth = 0): unknown {
  if (v === null || typeof v !== 'object' || depth > 64) return v;
  if (ArrayBuffer.isView(v) && !(v instanceof DataView)) {
    const copy = (v as unknown as { slice(): ArrayBufferView }).slice();
    transfer.push(copy.buffer as ArrayBuffer);
    return copy;
  }
  if (Array.isArray(v)) return v.map((x) => fresh(x, transfer, depth + 1));
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) out[k] = fresh(x, transfer, depth + 1);
  return out;
}

/** The buffers of a collated batch's typed arrays (all fresh). */
function buffers(v: unknown, out: ArrayBuffer[], depth = 0): ArrayBuffer[] {
  if (v === null || typeof v !== 'object' || depth > 64) return out;
  if (ArrayBuffer.isView(v)) {
    out.push(v.buffer as ArrayBuffer);
    return out;
  }
  for (const x of Array.isArray(v) ? v : Object.values(v)) buffers(x, out, depth + 1);
  return out;
}

const port = await endpoint();
let dataset: DatasetLike | null = null;
let collateOptions: CollateOptions | null = null;

port.listen((msg) => {
  void handle(msg);
});

async function handle(msg: ToWorker): Promise<void> {
  if (msg.type === 'init') {
    try {
      dataset = await rebuild(msg.desc);
      collateOptions = msg.collate;
      port.post({ type: 'ready', length: dataset.length }, []);
    } catch (err) {
      port.post({ type: 'error', j: null, error: errorData(err, null) }, []);
    }
    return;
  }
  const { j, indices } = msg;
  const ds = dataset as DatasetLike;
  const items: unknown[] = [];
  for (const index of indices) {
    try {
      items.push(getItem(ds, index));
    } catch (err) {
      port.post({ type: 'error', j, error: errorData(err, index) }, []);
      return;
    }
  }
  try {
    if (collateOptions !== null) {
      const batch = collate(items, collateOptions, 'defaultBatcher');
      port.post({ type: 'batch', j, batch }, buffers(batch, []));
    } else {
      const transfer: ArrayBuffer[] = [];
      const sent = fresh(items, transfer) as unknown[];
      port.post({ type: 'batch', j, items: sent }, transfer);
    }
  } catch (err) {
    port.post({ type: 'error', j, error: errorData(err, null) }, []);
  }
}
