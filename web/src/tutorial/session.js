// The page's side of the notebook (DOM-free): sends cells to the worker, one run at a time,
// and implements Stop (terminate the worker, start a fresh one, and report which cells ran
// in the old one and so must be re-run). Tested in Node with worker_threads.

/** The error a cell ends with when Stop ends it. */
export const STOPPED = { type: 'error', name: 'Stopped', code: null, message: 'ended by Stop; the notebook restarted with a fresh engine', line: null, column: null };

/**
 * A notebook session over a worker.
 */
export class NotebookSession {
  /**
   * @param {() => {postMessage: Function, terminate: Function, onmessage: Function | null}} createWorker
   *   makes a worker serving worker_core.js (a browser Worker or a Node adapter)
   * @param {{onEvent?: (id: string, ev: object) => void, onStart?: (id: string) => void,
   *   onReady?: () => void, onFatal?: (message: string) => void,
   *   onBackend?: (m: {backend: string, adapter: string | null, error?: string}) => void}} [hooks]
   *   onReady: a worker's engine loaded; onFatal: it failed to load (or the worker did not start);
   *   onBackend: the backend the engine runs on (with why, when the GPU asked for failed);
   *   onEvent also gets the late events of finished cells (ev.late on a late error)
   */
  constructor(createWorker, hooks = {}) {
    this.createWorker = createWorker;
    this.hooks = hooks;
    this.worker = null;
    this.nextRun = 1;
    this.pending = new Map(); // run -> {id, resolve}
    this.ran = []; // ids of the cells run in the current worker, in order (no repeats)
    this.running = null; // id of the cell running
    this.generation = 0;
    // id -> the oldest run whose late output still shows: a cell's new run or its Reset
    // drops what its earlier runs' timers still had in flight
    this.since = new Map();
    // the reader's files (name -> Uint8Array), sent to every worker this session starts
    this.files = new Map();
  }

  /** The current worker, started if there is none (loads the engine ahead of a run). */
  ensureWorker() {
    if (this.worker) return this.worker;
    const gen = ++this.generation;
    let w;
    try {
      w = this.createWorker();
    } catch (e) {
      // e.g. a browser that refuses module workers
      w = { postMessage() {}, terminate() {}, onmessage: null };
      queueMicrotask(() => gen === this.generation && this.fail(`the notebook's worker did not start: ${e?.message ?? e}`));
    }
    w.onmessage = (e) => {
      if (gen !== this.generation) return;
      this.onMessage(e?.data ?? e);
    };
    // The worker's script did not load (404, offline without a cache) or threw before it
    // could report: the Worker's own `error` event (errors of cell code are caught inside).
    w.onerror = (e) => {
      e?.preventDefault?.();
      if (gen !== this.generation) return;
      this.fail(`the notebook's worker did not start${e?.message ? ` (${e.message})` : ' (its script did not load)'}`);
    };
    this.worker = w;
    for (const [name, bytes] of this.files) w.postMessage({ type: 'file', name, bytes });
    return w;
  }

  /**
   * A file the reader gave the page (dropped or chosen): cells see it as `files.get(name)`,
   * in this worker and in the fresh ones Stop starts (a file of the same name is replaced).
   * @param {string} name
   * @param {Uint8Array} bytes kept by the session (the worker gets a copy)
   */
  addFile(name, bytes) {
    this.files.delete(name);
    this.files.set(name, bytes);
    if (this.worker) this.worker.postMessage({ type: 'file', name, bytes });
    else this.ensureWorker(); // sends every file
  }

  /** The engine cannot run: tell the page, end every waiting cell with the reason. */
  fail(message) {
    this.worker?.terminate();
    this.worker = null;
    this.generation++;
    this.hooks.onFatal?.(message);
    const error = { type: 'error', name: 'Error', code: null, message, line: null, column: null };
    for (const [run, q] of this.pending) {
      this.pending.delete(run);
      q.resolve({ id: q.id, status: 'error', error, ms: 0 });
    }
    this.running = null;
  }

  onMessage(msg) {
    const p = this.pending.get(msg.run);
    if (msg.type === 'ready') {
      this.hooks.onReady?.();
      return;
    }
    if (msg.type === 'backend') {
      // Which backend the worker's engine runs on (the GPU asked for may have failed).
      this.hooks.onBackend?.(msg);
      return;
    }
    if (msg.type === 'fatal') {
      this.hooks.onFatal?.(msg.message);
      const error = { type: 'error', name: 'Error', code: null, message: `the engine did not load: ${msg.message}`, line: null, column: null };
      for (const [run, q] of this.pending) {
        this.pending.delete(run);
        q.resolve({ id: q.id, status: 'error', error, ms: 0 });
      }
      return;
    }
    if (!p) {
      // output of a cell that already finished (a timer's print, a late error): its cell,
      // unless the cell was run again or reset since
      if (msg.type === 'event' && msg.id !== undefined && !(msg.run < (this.since.get(msg.id) ?? 0))) this.hooks.onEvent?.(msg.id, msg.ev);
      return;
    }
    if (msg.type === 'start') {
      this.running = p.id;
      this.hooks.onStart?.(p.id);
    } else if (msg.type === 'event') {
      this.hooks.onEvent?.(p.id, msg.ev);
    } else if (msg.type === 'done') {
      this.pending.delete(msg.run);
      if (this.running === p.id) this.running = null;
      if (!this.ran.includes(p.id)) this.ran.push(p.id);
      p.resolve({ id: p.id, status: msg.status, error: msg.error, ms: msg.ms });
    }
  }

  /**
   * Runs a cell after those already sent.
   * @returns {Promise<{id: string, status: 'ok'|'error', error: object|null, ms: number}>}
   *   a cell ended by Stop resolves with status 'error' and error STOPPED.
   */
  run(id, code) {
    const w = this.ensureWorker();
    const run = this.nextRun++;
    this.since.set(id, run);
    return new Promise((resolve) => {
      this.pending.set(run, { id, resolve });
      w.postMessage({ type: 'run', run, id, code });
    });
  }

  /** Reset of a cell: stops the timers its runs left in the worker (if one is running). */
  reset(id) {
    this.since.set(id, this.nextRun);
    this.worker?.postMessage({ type: 'reset', id });
  }

  /** Whether a cell is running or waiting. */
  get busy() {
    return this.pending.size > 0;
  }

  /**
   * Stop: terminates the worker (ending a runaway cell), resolves the cell running and the
   * ones waiting as stopped; the next run starts a fresh worker.
   * @returns {{stopped: string[], stale: string[]}} stopped: the cells ended or cancelled;
   *   stale: the cells that had run in the old worker (their names are gone: re-run them)
   */
  stop() {
    this.worker?.terminate();
    this.worker = null;
    this.generation++;
    const stopped = [];
    for (const [run, p] of this.pending) {
      this.pending.delete(run);
      stopped.push(p.id);
      p.resolve({ id: p.id, status: 'error', error: STOPPED, ms: 0 });
    }
    const stale = this.ran;
    this.ran = [];
    this.running = null;
    return { stopped, stale };
  }
}
