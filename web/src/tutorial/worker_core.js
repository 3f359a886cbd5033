// The notebook's worker side (DOM-free): owns one Notebook and runs the cells it is sent,
// one at a time, in order. The page's Web Worker (worker.js) and the Node tests
// (tests/js/support/notebook_worker_node.mjs, worker_threads) wire it to their port.
//
// Messages in:  {type: 'run', run, id, code} | {type: 'reset', id} (stops the timers the
//               cell's runs left behind) | {type: 'file', name, bytes} (a file the reader
//               gave the page: `files.get(name)` in cells from now on)
// Messages out: {type: 'ready'} | {type: 'fatal', message},
//               {type: 'start', run, id}, {type: 'event', run, id, ev},
//               {type: 'done', run, id, status, error, ms}
import { Notebook } from './runtime/notebook.js';
import { addFile } from './runtime/assets.js';

/**
 * Serves a notebook on a message port.
 * @param {{post: (msg: object) => void, listen: (handler: (msg: object) => void) => void}} port
 * @param {{loadKiln: () => Promise<object>, fetchMnist: (file: string) => Promise<Uint8Array>,
 *   fetchAsset?: (name: string) => Promise<Uint8Array>,
 *   catchErrors?: (report: (error: unknown) => void) => void}} env fetchAsset: reads a file of
 *   the tutorial's assets (`asset(name)` in cells); catchErrors: installs the
 *   worker's handlers of uncaught errors and unhandled rejections, calling `report` (they
 *   are shown under the cell that made them, never only in the console)
 */
export function serveNotebook(port, { loadKiln, fetchMnist, fetchAsset, catchErrors }) {
  let queue = Promise.resolve();
  let notebook = null;
  const files = new Map(); // the reader's files: kept from before the engine loads
  catchErrors?.((e) => notebook?.reportError(e));
  const ready = Promise.resolve()
    .then(loadKiln)
    .then(
      (kiln) => {
        notebook = new Notebook({ kiln, fetchMnist, fetchAsset, files });
        port.post({ type: 'ready' });
        return notebook;
      },
      (e) => {
        port.post({ type: 'fatal', message: String(e?.message ?? e) });
        throw e;
      },
    );
  ready.catch(() => {}); // reported as `fatal`; each run then answers with the reason
  port.listen((msg) => {
    if (msg?.type === 'file') {
      addFile(files, msg.name, msg.bytes);
      return;
    }
    if (msg?.type === 'reset') {
      notebook?.clearTimers(msg.id);
      return;
    }
    if (msg?.type !== 'run') return;
    const { run, id, code } = msg;
    queue = queue.then(async () => {
      let nb;
      try {
        nb = await ready;
      } catch (e) {
        port.post({ type: 'done', run, id, status: 'error', error: { type: 'error', name: 'Error', code: null, message: `the engine did not load: ${e?.message ?? e}`, line: null, column: null }, ms: 0 });
        return;
      }
      port.post({ type: 'start', run, id });
      const r = await nb.runCell(id, code, { onEvent: (ev) => port.post({ type: 'event', run, id, ev }) });
      port.post({ type: 'done', run, id, status: r.status, error: r.error, ms: r.ms });
    });
  });
}
