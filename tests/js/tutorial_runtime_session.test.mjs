// The notebook session (web/src/tutorial/session.js) over a real worker (worker_threads,
// running web/src/tutorial/worker_core.js as the page's Web Worker does): state kept
// between cells in the worker, events routed to their cell, and Stop ending a runaway
// `while (true) {}` cell, naming the cells to re-run, with later cells running in a fresh
// worker.
import { describe, it, expect, afterEach } from 'vitest';
import { Worker, MessageChannel } from 'node:worker_threads';
import { NotebookSession, STOPPED } from '../../web/src/tutorial/session.js';
import { serveNotebook } from '../../web/src/tutorial/worker_core.js';

const WORKER = new URL('./support/notebook_worker_node.mjs', import.meta.url);

/** A worker_threads Worker with the browser Worker's onmessage/postMessage/terminate. */
function nodeWorker() {
  const w = new Worker(WORKER);
  const adapter = {
    onmessage: null,
    postMessage: (m) => w.postMessage(m),
    terminate: () => w.terminate(),
  };
  w.on('message', (data) => adapter.onmessage?.({ data }));
  return adapter;
}

let session;
afterEach(() => session?.stop());

describe('NotebookSession', () => {
  it('keeps state between cells and routes events to their cell', async () => {
    const events = [];
    let ready = 0;
    session = new NotebookSession(nodeWorker, { onEvent: (id, ev) => events.push([id, ev.type, ev.text]), onReady: () => ready++ });
    session.ensureWorker();
    const a = session.run('a', 'const x = kiln.Tensor.fromData([1, 2, 3]);\nprint("made")');
    const b = session.run('b', 'x.sum().item()');
    expect(await a).toMatchObject({ id: 'a', status: 'ok', error: null });
    expect(await b).toMatchObject({ id: 'b', status: 'ok' });
    expect(events).toEqual([['a', 'text', 'made'], ['b', 'value', '6']]);
    expect(ready).toBe(1); // one worker, its engine loaded once
    const c = await session.run('c', 'x.reshape([2, 2])');
    expect(c.status).toBe('error');
    expect(c.error).toMatchObject({ name: 'KilnError', code: 'Shape', line: 1 });
  });

  it('Stop ends a runaway cell, names the cells to re-run, and later cells run in a fresh worker', async () => {
    const started = [];
    let loopStarted;
    const loopRunning = new Promise((r) => (loopStarted = r));
    session = new NotebookSession(nodeWorker, {
      onStart: (id) => {
        started.push(id);
        if (id === 'loop') loopStarted();
      },
    });
    expect((await session.run('a', 'const kept = 41;')).status).toBe('ok');
    expect((await session.run('b', 'kept + 1')).status).toBe('ok');
    const loop = session.run('loop', 'while (true) {}');
    const after = session.run('after', 'print("queued")');
    await loopRunning;
    expect(session.running).toBe('loop');
    const { stopped, stale } = session.stop();
    expect(stopped).toEqual(['loop', 'after']);
    expect(stale).toEqual(['a', 'b']);
    expect(await loop).toEqual({ id: 'loop', status: 'error', error: STOPPED, ms: 0 });
    expect((await after).status).toBe('error');
    expect(session.busy).toBe(false);
    // a fresh worker: the old names are gone until their cells run again
    const gone = await session.run('c', 'typeof kept');
    expect(gone.status).toBe('ok');
    const events = [];
    session.hooks.onEvent = (id, ev) => events.push(ev.text);
    await session.run('c', 'typeof kept');
    expect(events).toEqual(['undefined']);
    expect((await session.run('a', 'const kept = 41;')).status).toBe('ok');
    await session.run('b', 'kept + 1');
    expect(events).toEqual(['undefined', '42']);
    expect(started).toEqual(['a', 'b', 'loop', 'c', 'c', 'a', 'b']);
  });
});

describe('NotebookSession: late output and startup failures (review defects 3 and 5)', () => {
  it('a late print and a late error (timer, unhandled rejection) reach the cell that started them', async () => {
    const events = [];
    session = new NotebookSession(nodeWorker, { onEvent: (id, ev) => events.push([id, ev.type, ev.text ?? ev.message, ev.late ?? null]) });
    const a = await session.run('a', 'const t1 = setTimeout(() => print("late print"), 30)\nconst t2 = setTimeout(() => { throw new kiln.KilnError("Value", "late throw") }, 60);');
    expect(a.status).toBe('ok');
    const b = await session.run('b', 'Promise.reject(new Error("unawaited rejection"));\nprint("b ran")');
    expect(b.status).toMatch(/ok|error/);
    await session.run('c', 'await sleep(150)');
    expect(events).toContainEqual(['a', 'text', 'late print', null]);
    expect(events).toContainEqual(['a', 'error', 'late throw', true]);
    // the rejection nobody awaited: shown under the cell that made it (the one running or last run)
    expect(events.filter(([id, type, msg]) => id === 'b' && type === 'error' && msg === 'unawaited rejection')).toHaveLength(1);
  });

  it('a worker that does not start (its script fails to load): onFatal, and the waiting cells end with that error', async () => {
    const fatal = [];
    const broken = () => {
      const w = { onmessage: null, onerror: null, postMessage() {}, terminate() {} };
      setTimeout(() => w.onerror?.({ type: 'error', message: undefined, preventDefault() {} }), 10);
      return w;
    };
    session = new NotebookSession(broken, { onFatal: (m) => fatal.push(m) });
    const r = await session.run('a', 'print(1)');
    expect(r.status).toBe('error');
    expect(r.error).toMatchObject({ type: 'error', name: 'Error' });
    expect(r.error.message).toMatch(/worker did not start/);
    expect(fatal).toHaveLength(1);
    expect(fatal[0]).toMatch(/worker did not start/);
    expect(session.busy).toBe(false);
  });

  it('an engine that does not load: onFatal with the message, cells end with it, no unhandled rejection', async () => {
    const fatal = [];
    const failing = () => {
      const { port1, port2 } = new MessageChannel();
      serveNotebook(
        { post: (m) => port2.postMessage(m), listen: (h) => port2.on('message', h) },
        { loadKiln: () => Promise.reject(new Error('Failed to fetch assets/kiln-x.wasm')), fetchMnist: async () => new Uint8Array() },
      );
      const w = { onmessage: null, postMessage: (m) => port1.postMessage(m), terminate: () => port1.close() };
      port1.on('message', (data) => w.onmessage?.({ data }));
      return w;
    };
    session = new NotebookSession(failing, { onFatal: (m) => fatal.push(m) });
    const r = await session.run('a', 'print(1)');
    expect(r.status).toBe('error');
    expect(r.error.message).toBe('the engine did not load: Failed to fetch assets/kiln-x.wasm');
    expect(fatal).toEqual(['Failed to fetch assets/kiln-x.wasm']);
  });
});
