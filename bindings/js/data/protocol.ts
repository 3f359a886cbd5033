// Internal: the messages between a DataLoader and its workers (workers.ts, worker.ts).
import type { CollateOptions } from './collate.js';
import type { Description } from './plain.js';

/** Main -> worker. */
export type ToWorker =
  | { type: 'init'; desc: Description; collate: CollateOptions | null }
  | { type: 'load'; j: number; indices: number[] };

/** An error thrown in a worker, as data. */
export interface WorkerError {
  name: string;
  message: string;
  code: string | null;
  stack: string | null;
  /** The dataset index whose get() threw (null: not an item's error). */
  index: number | null;
}

/** Worker -> main. */
export type FromWorker =
  | { type: 'ready'; length: number }
  | { type: 'batch'; j: number; batch?: unknown; items?: unknown[] }
  | { type: 'error'; j: number | null; error: WorkerError };

/** An exception as plain data (for postMessage). */
export function errorData(err: unknown, index: number | null): WorkerError {
  const e = err as { name?: unknown; message?: unknown; code?: unknown; stack?: unknown } | null;
  return {
    name: typeof e?.name === 'string' ? e.name : 'Error',
    message: typeof e?.message === 'string' ? e.message : String(err),
    code: typeof e?.code === 'string' ? e.code : null,
    stack: typeof e?.stack === 'string' ? e.stack : null,
    index,
  };
}
