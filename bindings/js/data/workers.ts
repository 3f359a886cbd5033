// Internal: a DataLoader's workers on the main thread's side: starts them (Node
// worker_threads, or module Web Workers in browsers and workers), hands out batch j to
// worker j mod k, and returns the results in order, whatever order they arrive in. loader.ts
// imports this module on the first iteration with numWorkers > 0 (a chunk of its own in the
// bundled browser entry); the count of live workers is in live_workers.ts.
import { KilnError, ERROR_CODES, type ErrorCode } from '../errors.js';
import { fail } from '../tensor/checks.js';
import type { CollateOptions } from './collate.js';
import type { Description } from './plain.js';
import { countWorker, liveWorkers } from './live_workers.js';
import type { FromWorker, ToWorker, WorkerError } from './protocol.js';

/** One started worker. */
interface Port {
  post(msg: ToWorker): void;
  /** Stops the worker; resolves once it has exited (liveWorkers() no longer counts it). */
  terminate(): Promise<void>;
}

/** Where the worker script is: dist/data/worker.js, next to this file (Node). */
const WORKER_URL = new URL('./worker.js', import.meta.url);

export { liveWorkers };

function isNode(): boolean {
  const g = globalThis as { process?: { versions?: { node?: unknown } } };
  return typeof g.process?.versions?.node === 'string';
}

async function spawn(onMessage: (m: FromWorker) => void, onFailure: (err: KilnError) => void): Promise<Port> {
  if (isNode()) {
    const specifier = 'node:worker_threads';
    const { Worker } = (await import(/* @vite-ignore */ specifier)) as {
      Worker: new (url: URL) => {
        postMessage(m: unknown): void;
        on(ev: string, f: (x: unknown) => void): void;
        terminate(): Promise<number>;
      };
    };
    const w = new Worker(WORKER_URL);
    countWorker(1);
    let exited = false;
    let onExit!: () => void;
    const exit = new Promise<void>((resolve) => (onExit = resolve));
    const gone = () => {
      if (exited) return;
      exited = true;
      countWorker(-1);
      onExit();
    };
    w.on('exit', gone);
    w.on('message', (m) => onMessage(m as FromWorker));
    w.on('error', (err) => onFailure(crash(err)));
    w.on('messageerror', (err) => onFailure(crash(err)));
    return {
      post: (m) => w.postMessage(m),
      // terminate() resolves when the thread has stopped; 'exit' may come a turn later.
      terminate: async () => {
        if (!exited) await w.terminate().then(gone, gone);
        await exit;
      },
    };
  }
  if (typeof (globalThis as { Worker?: unknown }).Worker !== 'function') {
    throw fail('State', 'DataLoader: numWorkers > 0 needs Web Workers, which this environment lacks (use numWorkers: 0)');
  }
  // Written out as bundlers (Vite, webpack) recognise it, so they ship worker.js with the app.
  const w = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
  countWorker(1);
  let terminated = false;
  w.onmessage = (e) => onMessage(e.data as FromWorker);
  w.onerror = (e) => {
    e.preventDefault?.();
    onFailure(crash((e as ErrorEvent).error ?? new Error((e as ErrorEvent).message ?? 'the worker failed to start')));
  };
  w.onmessageerror = () => onFailure(crash(new Error('a message from the worker could not be deserialized')));
  return {
    post: (m) => w.postMessage(m),
    terminate: async () => {
      w.terminate();
      if (!terminated) countWorker(-1);
      terminated = true;
    },
  };
}

function crash(err: unknown): KilnError {
  const text = (err as Error)?.message ?? String(err);
  const e = new KilnError('State', `DataLoader: a worker failed: ${text}`);
  (e as { cause?: unknown }).cause = err;
  return e;
}

/** The KilnError of an error a worker reported. */
export function fromWorkerError(w: WorkerError, worker: number, j: number | null): KilnError {
  const code: ErrorCode = w.code !== null && (ERROR_CODES as readonly string[]).includes(w.code) ? (w.code as ErrorCode) : 'Value';
  const cause = new Error(w.message);
  cause.name = w.name;
  if (w.stack !== null) cause.stack = w.stack;
  const where = j === null ? `worker ${worker}` : `worker ${worker}, batch ${j}`;
  const message = w.index !== null
    ? `DataLoader: the dataset's get(${w.index}) threw ${w.name}: ${w.message} (in ${where})`
    : `DataLoader: ${w.message} (in ${where})`;
  const e = new KilnError(code, message);
  (e as { cause?: unknown }).cause = cause;
  return e;
}

interface Pending {
  resolve(v: { batch?: unknown; items?: unknown[] }): void;
  reject(e: unknown): void;
  promise: Promise<{ batch?: unknown; items?: unknown[] }>;
}

/**
 * k workers, each holding the dataset; `load(j, indices)` starts batch j on worker j mod k
 * and `result(j)` waits for it.
 */
export class WorkerPool {
  private readonly ports: Port[] = [];
  private readonly pending = new Map<number, Pending>();
  private failure: KilnError | null = null;
  private closing: Promise<void> | null = null;

  /** Starts k workers and waits until each has rebuilt the dataset (of `length` items). */
  static async start(k: number, desc: Description, collate: CollateOptions | null, length: number): Promise<WorkerPool> {
    const pool = new WorkerPool();
    try {
      const ready: Promise<void>[] = [];
      for (let w = 0; w < k; w++) {
        let settle!: { resolve(): void; reject(e: unknown): void };
        ready.push(new Promise<void>((resolve, reject) => (settle = { resolve, reject })));
        const port = await spawn((m) => {
          if (m.type === 'ready') {
            if (m.length !== length) {
              settle.reject(fail('State', `DataLoader: worker ${w} rebuilt the dataset with ${m.length} items, the main thread's has ${length}`));
            } else {
              settle.resolve();
            }
          } else if (m.type === 'error' && m.j === null) {
            settle.reject(fromWorkerError(m.error, w, null));
          } else {
            pool.onMessage(w, m);
          }
        }, (err) => {
          settle.reject(err);
          pool.fail(err);
        });
        pool.ports.push(port);
        port.post({ type: 'init', desc, collate });
      }
      await Promise.all(ready);
      return pool;
    } catch (err) {
      await pool.close();
      throw err;
    }
  }

  private onMessage(w: number, m: FromWorker): void {
    if (m.type === 'ready') return;
    const j = m.j as number;
    const p = this.pending.get(j);
    if (p === undefined) return;
    if (m.type === 'error') p.reject(fromWorkerError(m.error, w, j));
    else p.resolve({ batch: m.batch, items: m.items });
  }

  private fail(err: KilnError): void {
    if (this.failure === null) this.failure = err;
    for (const p of this.pending.values()) p.reject(err);
  }

  /** Starts batch j (dataset indices `indices`) on worker j mod k. */
  load(j: number, indices: number[]): void {
    let p!: Pending;
    const promise = new Promise<{ batch?: unknown; items?: unknown[] }>((resolve, reject) => {
      p = { resolve, reject, promise: null as never };
    });
    p.promise = promise;
    promise.catch(() => {}); // awaited by result(j); a broken iteration may never await it
    this.pending.set(j, p);
    if (this.failure !== null) {
      p.reject(this.failure);
      return;
    }
    this.ports[j % this.ports.length].post({ type: 'load', j, indices });
  }

  /** Batch j's result (collated batch or items); rejects with the worker's KilnError. */
  async result(j: number): Promise<{ batch?: unknown; items?: unknown[] }> {
    const p = this.pending.get(j);
    if (p === undefined) throw fail('Internal', `DataLoader: batch ${j} was not started`);
    try {
      return await p.promise;
    } finally {
      this.pending.delete(j);
    }
  }

  /**
   * Terminates every worker and resolves once all have exited (idempotent: a second call
   * waits for the same exits).
   */
  close(): Promise<void> {
    if (this.closing === null) {
      this.pending.clear();
      this.closing = Promise.all(this.ports.map((port) => port.terminate())).then(() => {});
    }
    return this.closing;
  }
}
