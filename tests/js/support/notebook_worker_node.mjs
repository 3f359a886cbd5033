// A notebook worker in Node (worker_threads) for the session tests: the same worker side
// as the page's Web Worker (web/src/tutorial/worker_core.js) over parentPort.
import 'fake-indexeddb/auto';
import { parentPort } from 'node:worker_threads';
import { init } from 'kiln-dl';
import { serveNotebook } from '../../../web/src/tutorial/worker_core.js';
import { readMnist, readAsset } from './notebook_node.mjs';

serveNotebook(
  { post: (msg) => parentPort.postMessage(msg), listen: (handler) => parentPort.on('message', handler) },
  {
    loadKiln: () => init({ engine: 'full', threads: false }), // as the page's worker
    fetchMnist: readMnist,
    fetchAsset: readAsset,
    catchErrors: (report) => {
      process.on('uncaughtException', report);
      process.on('unhandledRejection', report);
    },
  },
);
