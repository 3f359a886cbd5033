// The production server of the web site (`npm start`: scripts/start.sh; the browser tests
// serve through it too: tests/e2e/support.mjs startPreview): serves a Vite build's output
// folder with sirv, sending the .gz twin that the build wrote beside a file
// (web/vite-mnist.js precompress(): the engine's .wasm, .js, .mjs, CSS, HTML) with
// Content-Encoding: gzip to browsers that accept it, and every response with the
// cross-origin isolation headers (COOP/COEP) of `vite preview`. Cache-Control: hashed
// files (assets/, MNIST's chunks) are immutable, the rest revalidates (ETag). MNIST's gzip
// chunks (mnist/gz/*.gz) are gzip files as such (application/gzip, no Content-Encoding):
// the page's worker decompresses them with DecompressionStream. A folder asked for
// without its slash (/tutorial) is redirected to it (/tutorial/).
//   node scripts/serve.mjs <dir> [--port 4173] [--host 127.0.0.1]
import { createServer } from 'node:http';
import { createReadStream, existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import sirv from 'sirv';

/** The headers of every response (web/vite-mnist.js `isolation`, as `vite preview` sends them). */
export const ISOLATION = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
};

const IMMUTABLE = 'public, max-age=31536000, immutable';
const CHUNK = /^\/mnist\/gz\/[a-z0-9.-]+\.gz$/;

/**
 * A request handler for the built site in `dir`.
 * @param {string} dir a Vite build's output folder
 * @returns {(req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => void}
 */
export function siteHandler(dir) {
  const root = resolve(dir);
  const files = sirv(root, {
    gzip: true,
    etag: true,
    extensions: ['html'],
    setHeaders(res, pathname) {
      for (const [k, v] of Object.entries(ISOLATION)) res.setHeader(k, v);
      res.setHeader('Cache-Control', pathname.startsWith('/assets/') ? IMMUTABLE : 'no-cache');
    },
  });
  return (req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (CHUNK.test(path)) {
      // sirv would label a .gz file Content-Encoding: gzip (the browser would unpack it).
      const abs = join(root, path);
      let size;
      try {
        size = statSync(abs).size;
      } catch {
        size = -1;
      }
      if (size >= 0) {
        res.writeHead(200, { ...ISOLATION, 'Content-Type': 'application/gzip', 'Content-Length': size, 'Cache-Control': IMMUTABLE });
        if (req.method === 'HEAD') res.end();
        else createReadStream(abs).pipe(res);
        return;
      }
    }
    // A folder without its slash (/tutorial): redirect, so the page's relative URLs resolve.
    const folder = join(root, path);
    if (!path.endsWith('/') && !/\.[a-z0-9]+$/i.test(path) && folder.startsWith(root) && existsSync(join(folder, 'index.html'))) {
      const query = (req.url ?? '').slice(path.length);
      res.writeHead(301, { ...ISOLATION, Location: `${path}/${query}` });
      res.end();
      return;
    }
    files(req, res, () => {
      res.writeHead(404, { ...ISOLATION, 'Content-Type': 'text/plain; charset=utf-8' });
      res.end(`Not found: ${path}\n`);
    });
  };
}

/**
 * Serves `dir` on host:port.
 * @returns {Promise<import('node:http').Server>} listening
 */
export function serve(dir, { port = 4173, host = '127.0.0.1' } = {}) {
  const server = createServer(siteHandler(dir));
  return new Promise((ok, fail) => {
    server.once('error', fail);
    server.listen(port, host, () => ok(server));
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const opt = (name, dflt) => (args.includes(name) ? args[args.indexOf(name) + 1] : dflt);
  const dir = args.find((a, i) => !a.startsWith('--') && !args[i - 1]?.startsWith('--'));
  if (!dir) {
    console.error('usage: node scripts/serve.mjs <dir> [--port 4173] [--host 127.0.0.1]');
    process.exit(2);
  }
  try {
    statSync(join(dir, 'index.html'));
  } catch {
    console.error(`[serve] ${dir}/index.html is missing: build the site first (vite build)`);
    process.exit(1);
  }
  const port = Number(opt('--port', 4173));
  const host = opt('--host', '127.0.0.1');
  serve(dir, { port, host }).then(
    () => console.log(`[serve] ${resolve(dir)} on http://${host}:${port}/ (gzip, COOP/COEP)`),
    (e) => {
      console.error(`[serve] cannot listen on ${host}:${port}: ${e.message}`);
      process.exit(1);
    },
  );
}
