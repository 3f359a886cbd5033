// Initial weights for the playground's model from IndexedDB (`weights=idb:<name>` in the
// link, state.js): the SafeTensors bytes another page stored with kiln.io.saveToIndexedDB
// (the tutorial's Step 13), loaded into the freshly built model in the worker. Never
// throws: every outcome is a notice for the page, and on failure the model keeps its
// random weights.

/**
 * Loads the weights stored under `name` into the session's model.
 * @param {{loadBytesFromIndexedDB(name: string): Promise<Uint8Array>}} engine engine.js's Engine
 * @param {{load(bytes: Uint8Array): void}} session engine.js's Session (its model is unchanged
 *   when the bytes do not fit it)
 * @param {string} name the IndexedDB entry (database "kiln-dl", store "safetensors")
 * @returns {Promise<{status: 'loaded' | 'missing' | 'mismatch' | 'error', kind: 'info' | 'error', text: string}>}
 */
export async function loadInitialWeights(engine, session, name) {
  let bytes;
  try {
    bytes = await engine.loadBytesFromIndexedDB(name);
  } catch (e) {
    if (e?.code === 'Io' && /nothing is stored/.test(e.message ?? '')) {
      return {
        status: 'missing',
        kind: 'error',
        text: `No weights named "${name}" are stored in this browser (run the tutorial's Step 13 in this browser first); the model starts from random weights.`,
      };
    }
    return { status: 'error', kind: 'error', text: `Could not read the weights "${name}" from IndexedDB: ${e?.message ?? e}; the model starts from random weights.` };
  }
  try {
    session.load(bytes);
  } catch (e) {
    if (e?.code === 'Format') {
      return {
        status: 'mismatch',
        kind: 'error',
        text: `The weights "${name}" do not fit these layers (${String(e.message).split('\n')[0]}); the model starts from random weights.`,
      };
    }
    return { status: 'error', kind: 'error', text: `Could not load the weights "${name}": ${e?.message ?? e}; the model starts from random weights.` };
  }
  return { status: 'loaded', kind: 'info', text: `Loaded the tutorial's weights (${name})` };
}
