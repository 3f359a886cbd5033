// `asset(name)` and `files` for notebook cells (DOM-free).
// - asset(name): a file shipped with the tutorial (web/tutorial/assets/, e.g. `xor.pt`),
//   read by an environment-given reader: the page's worker fetches
//   `<tutorial page>/assets/<name>` (served by `npm start`, precached by the service
//   worker), Node reads web/tutorial/assets/<name> (tests/js/support/notebook_node.mjs).
// - files: the files the reader dropped on the page or chose with "Add file…", a Map
//   name -> Uint8Array (the newest file of a name replaces the older one).

/** What an asset name may be: a file name in the assets folder (no path, no leading dot). */
export const ASSET_NAME = /^[A-Za-z0-9_][A-Za-z0-9._-]*$/;

function fail(code, message) {
  const e = new Error(message);
  e.name = 'KilnError';
  e.code = code;
  return e;
}

/**
 * The `asset` global of the notebook.
 * @param {((name: string) => Promise<Uint8Array>) | null | undefined} fetchBytes reads one
 *   file of the tutorial's assets by name (rejects if there is none)
 * @returns {(name: string) => Promise<Uint8Array>} asset(name): the file's bytes, a fresh
 *   copy each call (a cell may change it); rejects with a KilnError `Value` for a name that
 *   is not a plain file name, `Io` (naming the file) when it cannot be read
 */
export function createAsset(fetchBytes) {
  const cache = new Map(); // name -> Promise<Uint8Array>
  return async function asset(name) {
    if (typeof name !== 'string' || !ASSET_NAME.test(name)) {
      throw fail('Value', `asset: expected the name of a file in the tutorial's assets, such as 'xor.pt' (no folders), got ${typeof name === 'string' ? JSON.stringify(name) : typeof name}`);
    }
    // made now, while the calling cell is on the stack (so the error names its line)
    const failure = fail('Io', `asset('${name}'): the tutorial has no such file, or it could not be read`);
    if (!cache.has(name)) {
      const p = Promise.resolve()
        .then(() => {
          if (!fetchBytes) throw new Error('this notebook has no assets');
          return fetchBytes(name);
        })
        .then((bytes) => {
          if (!(bytes instanceof Uint8Array)) throw new Error('the reader did not return bytes');
          return bytes;
        })
        .catch((e) => {
          throw Object.assign(new Error(String(e?.message ?? e)), { cause: e });
        });
      p.catch(() => cache.delete(name)); // a failed read is tried again next time
      cache.set(name, p);
    }
    let bytes;
    try {
      bytes = await cache.get(name);
    } catch (e) {
      failure.message += ` (${e.message})`;
      throw failure;
    }
    return bytes.slice();
  };
}

/**
 * Adds a file the reader gave the page to `files` (newest last; it replaces an older file
 * of the same name).
 * @param {Map<string, Uint8Array>} files
 * @param {string} name
 * @param {Uint8Array} bytes
 */
export function addFile(files, name, bytes) {
  files.delete(name);
  files.set(String(name), bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes));
}
