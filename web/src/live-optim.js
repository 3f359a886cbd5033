// Carrying a model and its optimizer's state across a live change of the training settings
// (live.js): pure helpers over the SafeTensors bytes that kiln-dl writes (the model's
// saveSafetensors and Optimizer.saveState), so the engine's own loaders (loadSafetensors,
// Optimizer.loadState: every key and shape checked) take them back.
//
// - A dropout change adds or removes `dropout` layers of the kiln.nn.sequential spec, which
//   moves the indices of the layers after it: "3.weight" becomes "2.weight" (and its Adam
//   moments "3.weight.moment_1" -> "2.weight.moment_1"). paramLayerMap() pairs the layers
//   that hold parameters; renameSafetensors() renames the tensors.
// - Optimizer.loadState restores the saved schedule (the old learning rate) with the moments:
//   withConstantLr() rewrites the state's metadata so the new rate holds from the saved step
//   on (as the engine's own set_schedule: schedule_start = steps).
//
// SafeTensors layout: 8 bytes little-endian header length N, N bytes of JSON
// ({name: {dtype, shape, data_offsets}, __metadata__: {string: string}}), then the data;
// offsets are relative to the data, so a new header leaves the data bytes as they are.

/** The spec layer types that hold parameters (the playground's builder makes these). */
const PARAM_TYPES = new Set(['linear', 'conv2d', 'conv1d', 'batchNorm', 'layerNorm', 'embedding', 'prelu']);

/**
 * Reads a SafeTensors file's header.
 * @param {Uint8Array} bytes
 * @returns {{header: object, dataStart: number}}
 * @throws {Error} for bytes too short or a header that is not a JSON object.
 */
export function readHeader(bytes) {
  if (!(bytes instanceof Uint8Array) || bytes.length < 8) throw new Error('SafeTensors: fewer than 8 bytes');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = Number(view.getBigUint64(0, true));
  if (n > bytes.length - 8) throw new Error(`SafeTensors: the header claims ${n} bytes, the file has ${bytes.length - 8} after the length`);
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n)));
  if (header === null || typeof header !== 'object' || Array.isArray(header)) throw new Error('SafeTensors: the header is not a JSON object');
  return { header, dataStart: 8 + n };
}

/**
 * New SafeTensors bytes with the tensors renamed and metadata entries set; the data bytes
 * are copied unchanged. The header is padded with spaces to a multiple of 8 bytes.
 * @param {Uint8Array} bytes
 * @param {{rename?: (name: string) => string, metadata?: Record<string, string>}} edit
 * @returns {Uint8Array}
 * @throws {Error} if two tensors would get the same name.
 */
export function rewriteSafetensors(bytes, { rename = (k) => k, metadata = {} } = {}) {
  const { header, dataStart } = readHeader(bytes);
  const out = {};
  for (const [key, value] of Object.entries(header)) {
    if (key === '__metadata__') continue;
    const next = rename(key);
    if (Object.hasOwn(out, next)) throw new Error(`SafeTensors: two tensors would be named "${next}"`);
    out[next] = value;
  }
  const meta = { ...(header.__metadata__ ?? {}), ...metadata };
  if (Object.keys(meta).length > 0) out.__metadata__ = meta;
  let json = new TextEncoder().encode(JSON.stringify(out));
  const padded = Math.ceil(json.length / 8) * 8;
  if (padded !== json.length) {
    const p = new Uint8Array(padded).fill(0x20);
    p.set(json);
    json = p;
  }
  const data = bytes.subarray(dataStart);
  const result = new Uint8Array(8 + json.length + data.length);
  new DataView(result.buffer).setBigUint64(0, BigInt(json.length), true);
  result.set(json, 8);
  result.set(data, 8 + json.length);
  return result;
}

/** The SafeTensors `__metadata__` of bytes ({} if none). */
export const metadataOf = (bytes) => ({ ...(readHeader(bytes).header.__metadata__ ?? {}) });

/**
 * Optimizer.saveState bytes whose learning rate is `lr` from the saved step on: the
 * schedule becomes the constant `lr`, starting at the saved step count (the moments, the
 * step count and the last rate are kept).
 * @param {Uint8Array} bytes Optimizer.saveState's bytes (metadata format "kiln optimizer state")
 * @param {number} lr
 * @param {(name: string) => string} [rename] renames the per-parameter entries too
 */
export function withConstantLr(bytes, lr, rename) {
  const meta = metadataOf(bytes);
  if (meta.format !== 'kiln optimizer state' || !/^\d+$/.test(meta.steps ?? '')) {
    throw new Error(`not a kiln optimizer state (metadata format "${meta.format}")`);
  }
  if (!(typeof lr === 'number' && Number.isFinite(lr) && lr > 0)) throw new Error(`learning rate must be a positive number, got ${lr}`);
  return rewriteSafetensors(bytes, {
    rename,
    metadata: { schedule: JSON.stringify({ kind: 'constant', lr }), schedule_start: meta.steps },
  });
}

/**
 * Pairs the parameter-holding layers of two kiln.nn.sequential specs by order: old index ->
 * new index. Null when they differ in count, type or configuration (the model's parameters
 * do not carry over: a reset). Identical indices give an identity map.
 * @param {{layers: object[]}} oldSpec
 * @param {{layers: object[]}} newSpec
 * @returns {Map<number, number> | null}
 */
export function paramLayerMap(oldSpec, newSpec) {
  const holders = (spec) => spec.layers.map((l, i) => [i, l]).filter(([, l]) => PARAM_TYPES.has(l.type));
  const a = holders(oldSpec);
  const b = holders(newSpec);
  if (a.length !== b.length) return null;
  const map = new Map();
  for (let k = 0; k < a.length; k++) {
    if (JSON.stringify(a[k][1]) !== JSON.stringify(b[k][1])) return null;
    map.set(a[k][0], b[k][0]);
  }
  return map;
}

/** True if the map moves no layer. */
export const isIdentity = (map) => [...map].every(([a, b]) => a === b);

/**
 * A tensor-name renamer for a layer map: "<old index>.<rest>" -> "<new index>.<rest>".
 * @param {Map<number, number>} map
 * @returns {(name: string) => string}
 * @throws {Error} (when called) for a name whose layer the map does not know.
 */
export function renamer(map) {
  return (name) => {
    const m = /^(\d+)\.(.+)$/.exec(name);
    if (!m || !map.has(Number(m[1]))) throw new Error(`the tensor "${name}" belongs to no parameter layer`);
    return `${map.get(Number(m[1]))}.${m[2]}`;
  };
}
