// The reader's files and the tutorial's assets in the notebook (web/src/tutorial/runtime/
// assets.js): `files` (a Map name -> Uint8Array of the files dropped on the page or added
// with "Add file…", the newest of a name winning) and `asset(name)` (a file shipped in
// web/tutorial/assets/, read from disk in Node as the page's worker fetches it); the
// session sending the files to its worker, and again to the fresh worker Stop starts.
// Expected bytes are read from the files themselves, or written by hand.
import { describe, it, expect, afterEach } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { createNotebook, ASSETS_DIR } from './support/notebook_node.mjs';
import { createAsset, addFile, ASSET_NAME } from '../../web/src/tutorial/runtime/index.js';
import { NotebookSession } from '../../web/src/tutorial/session.js';
import { assetFiles } from '../../web/vite-tutorial.js';

const XOR_PT = readFileSync(join(ASSETS_DIR, 'xor.pt'));

describe('asset(name)', () => {
  it('reads a file shipped with the tutorial, a fresh copy each call', async () => {
    const nb = await createNotebook();
    const r = await nb.runCell('a', "const a = await asset('xor.pt');\nprint('length:', a.length, 'zip:', a[0] === 0x50 && a[1] === 0x4b);\na[0] = 0;\n(await asset('xor.pt'))[0]");
    expect(r.status).toBe('ok');
    expect(r.text).toBe(`length: ${XOR_PT.length} zip: true\n${0x50}`);
  });

  it('its bytes are the file on disk, and a PyTorch checkpoint loads from them', async () => {
    const nb = await createNotebook();
    const r = await nb.runCell('a', "const d = kiln.io.loadPytorch(await asset('xor.pt'));\nprint(Object.keys(d).join(' '));\nkiln.dispose(Object.values(d))");
    expect(r.status, r.text).toBe('ok');
    expect(r.text).toBe('net.0.bias net.0.weight net.2.bias net.2.weight'); // the record's keys, sorted
    const bytes = await createAsset(async (n) => new Uint8Array(readFileSync(join(ASSETS_DIR, n))))('xor.pt');
    expect(Buffer.from(bytes).equals(XOR_PT)).toBe(true);
  });

  it('refuses a name that is not a plain file name (Value) and names a missing file (Io)', async () => {
    const nb = await createNotebook();
    for (const bad of ["'../package.json'", "'a/b.pt'", "''", "'.hidden'", '42']) {
      const r = await nb.runCell('bad', `await asset(${bad})`);
      expect(r.status).toBe('error');
      expect(r.error.code, bad).toBe('Value');
      expect(r.error.line).toBe(1);
    }
    const r = await nb.runCell('missing', "await asset('nope.pt')");
    expect(r.error).toMatchObject({ code: 'Io', line: 1 });
    expect(r.error.message).toMatch(/^asset\('nope\.pt'\): the tutorial has no such file/);
  });

  it('without a reader it rejects with Io; a failed read is tried again', async () => {
    await expect(createAsset(undefined)('x.pt')).rejects.toMatchObject({ code: 'Io' });
    let calls = 0;
    const flaky = createAsset(async () => {
      calls++;
      if (calls === 1) throw new Error('offline');
      return new Uint8Array([1, 2, 3]);
    });
    await expect(flaky('x.pt')).rejects.toThrow(/offline/);
    expect(Array.from(await flaky('x.pt'))).toEqual([1, 2, 3]);
    expect(Array.from(await flaky('x.pt'))).toEqual([1, 2, 3]);
    expect(calls).toBe(2); // the good read is cached
  });

  it('ASSET_NAME and the files the build ships (not the generator script)', () => {
    expect(['xor.pt', 'model_1.safetensors', 'a-b.c'].every((n) => ASSET_NAME.test(n))).toBe(true);
    expect(['../x', 'a/b', '.x', '', 'a b'].some((n) => ASSET_NAME.test(n))).toBe(false);
    const shipped = assetFiles();
    expect(shipped).toContain('xor.pt');
    expect(shipped).toContain('xor.json');
    expect(shipped.some((n) => n.endsWith('.py'))).toBe(false);
  });
});

describe('files', () => {
  it('is an empty Map until the reader gives a file; then files.get(name) is its bytes', async () => {
    const nb = await createNotebook();
    expect((await nb.runCell('a', "files instanceof Map && files.size === 0 && files.get('m.pt') === undefined")).text).toBe('true');
    nb.addFile('m.pt', new Uint8Array([7, 8, 9]));
    expect((await nb.runCell('b', "Array.from(files.get('m.pt'))")).text).toBe('[7, 8, 9]');
  });

  it('the newest file of a name wins and comes last', () => {
    const files = new Map();
    addFile(files, 'a.pt', new Uint8Array([1]));
    addFile(files, 'b.csv', new Uint8Array([2]));
    addFile(files, 'a.pt', new Uint8Array([3]).buffer); // an ArrayBuffer becomes a Uint8Array
    expect([...files.keys()]).toEqual(['b.csv', 'a.pt']);
    expect(Array.from(files.get('a.pt'))).toEqual([3]);
  });

  it("a cell's `files.get('xor.pt') ?? await asset('xor.pt')` takes the reader's file first", async () => {
    const nb = await createNotebook();
    const code = "const b = files.get('xor.pt') ?? await asset('xor.pt');\nb.length";
    expect((await nb.runCell('a', code)).text).toBe(String(XOR_PT.length));
    nb.addFile('xor.pt', new Uint8Array(5));
    expect((await nb.runCell('a', code)).text).toBe('5');
  });
});

describe('NotebookSession.addFile', () => {
  const WORKER = new URL('./support/notebook_worker_node.mjs', import.meta.url);
  function nodeWorker() {
    const w = new Worker(WORKER);
    const adapter = { onmessage: null, postMessage: (m) => w.postMessage(m), terminate: () => w.terminate() };
    w.on('message', (data) => adapter.onmessage?.({ data }));
    return adapter;
  }
  let session;
  afterEach(() => session?.stop());

  it('sends files to the worker (before and after it starts) and to the fresh worker after Stop', async () => {
    session = new NotebookSession(nodeWorker);
    session.addFile('one.bin', new Uint8Array([1, 2])); // starts the worker
    session.addFile('two.bin', new Uint8Array([3]));
    session.addFile('one.bin', new Uint8Array([4, 5, 6])); // replaces the first
    const read = "[...files].map(([n, b]) => `${n}=${Array.from(b)}`).join(' ')";
    expect(await session.run('a', read)).toMatchObject({ status: 'ok' });
    const shown = [];
    session.hooks.onEvent = (id, ev) => shown.push(ev.text);
    await session.run('b', read);
    expect(shown).toEqual(['two.bin=3 one.bin=4,5,6']);
    session.stop();
    expect(session.worker).toBe(null);
    await session.run('c', read); // a fresh worker: the files were sent again
    expect(shown).toEqual(['two.bin=3 one.bin=4,5,6', 'two.bin=3 one.bin=4,5,6']);
    expect([...session.files.keys()]).toEqual(['two.bin', 'one.bin']);
  });
});
