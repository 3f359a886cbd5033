// The initial module's functions that only the deferred module calls, reached through table slots
// instead of exports (issue 17: what a page downloads). Run by scripts/split_wasm.mjs on each split
// engine after wasm-split and scripts/split_stubs.mjs.
//
// wasm-split exports every initial-module function the deferred module calls, and the deferred
// module imports it by that export's name ({primary: Module.asm}, bindings/js/deferred.ts): 476
// exports in the inference engine's initial module, 3.6 KB of export section (2.5 KB gzip -9),
// where an entry costs a name, a kind and an index. This step:
//   1. appends those functions to the table, in one active element segment at the table's end
//      (an entry is the function's index: 2 bytes), and grows the table's limits by as many;
//   2. removes their exports (the glue's own exports, those of the unsplit module, stay: the
//      glue reads them by name; so do the stubs' "~..." exports, which deferred.ts reads);
//   3. renames each such import of the deferred module from ("primary", <export name>) to
//      ("primary", "#<slot>"), and sets its import of the table to the new limits.
// deferred.ts answers an import "#<slot>" with the function in that slot of the engine's table
// (the initial module's element segment has put it there at instantiation).
//
//   slotImports({ primaries, deferred, unsplit })   (rewrites the files in place)
import { readFileSync, writeFileSync } from 'node:fs';
import { encLeb, leb, sectionsOf } from './split_data.mjs';
import { elementPayload, elementSegments, exportsOf, importsOf, readLimits, STUB_PREFIX, withPayloads } from './split_stubs.mjs';

/** The prefix of a deferred module's import that names a table slot ("#123"). */
export const SLOT_PREFIX = '#';

const vec = (items) => [...encLeb(items.length), ...items.flat()];
const str = (s) => vec([...Buffer.from(s, 'utf8')]);

const limitsBytes = ({ flags, min, max }) => [flags, ...encLeb(min), ...(flags & 1 ? encLeb(max) : [])];

/** The one table of a module's table section: { reftype, limits }. */
function tableOf(b, file) {
  const sec = sectionsOf(b, file).find((s) => s.id === 4);
  if (!sec) throw new Error(`split_slots: ${file} has no table section`);
  const [n, i] = leb(b, sec.start);
  if (n !== 1) throw new Error(`split_slots: ${file} has ${n} tables, not one`);
  const [limits] = readLimits(b, i + 1);
  return { reftype: b[i], limits };
}

/**
 * Moves the functions the deferred module imports from the initial module by an export of
 * wasm-split's into table slots (see the file comment).
 * @param {{ primaries: string[], deferred: string, unsplit: string }} files the initial modules
 *   (the SIMD128 one first; the relaxed one, split with the same kept functions in the same order,
 *   must export the same functions under the same names), their shared deferred module, and the
 *   unsplit module the engine was linked as (whose exports are the glue's)
 * @returns {{ moved: number, slot: number }} the functions moved and the first new slot
 * @throws Error if the initial modules differ in what they export or in their table
 */
export function slotImports({ primaries, deferred, unsplit }) {
  const glue = new Set(exportsOf(readFileSync(unsplit), unsplit).map((e) => e.name));
  const d = readFileSync(deferred);
  const dImports = importsOf(d, deferred);
  const wanted = new Set(dImports.filter((i) => i.module === 'primary' && i.kind === 0).map((i) => i.name));
  const first = readFileSync(primaries[0]);
  const movable = exportsOf(first, primaries[0])
    .filter((e) => e.kind === 0 && wanted.has(e.name) && !glue.has(e.name) && !e.name.startsWith(STUB_PREFIX))
    .sort((a, b) => a.index - b.index);
  if (movable.length === 0) return { moved: 0, slot: -1 };
  const { limits } = tableOf(first, primaries[0]);
  const slot = limits.min;
  if (limits.max !== null && limits.max !== limits.min) {
    throw new Error(`split_slots: ${primaries[0]}'s table may grow (limits ${limits.min}..${limits.max}): new slots at its end could be taken`);
  }
  const grown = { flags: limits.flags, min: limits.min + movable.length, max: limits.max === null ? null : limits.max + movable.length };
  const slotOf = new Map(movable.map((e, k) => [e.name, slot + k]));
  for (const file of primaries) {
    const b = readFileSync(file);
    const secs = sectionsOf(b, file);
    const exports = exportsOf(b, file);
    for (const e of movable) {
      const mine = exports.find((x) => x.name === e.name);
      if (!mine || mine.kind !== 0 || mine.index !== e.index) {
        throw new Error(`split_slots: ${file} does not export ${e.name} as function ${e.index}, as ${primaries[0]} does`);
      }
    }
    const t = tableOf(b, file);
    if (t.limits.min !== limits.min || t.limits.max !== limits.max) throw new Error(`split_slots: ${file}'s table differs from ${primaries[0]}'s`);
    const segments = elementSegments(b, file);
    if (segments.some((s) => s.offset + s.funcs.length > slot)) throw new Error(`split_slots: ${file} has an element segment past its table's size`);
    const payload = {
      4: [1, t.reftype, ...limitsBytes(grown)],
      7: vec(exports.filter((x) => !slotOf.has(x.name)).map((x) => [...str(x.name), x.kind, ...encLeb(x.index)])),
      9: elementPayload([...segments, { offset: slot, funcs: movable.map((e) => e.index) }]),
    };
    writeFileSync(file, withPayloads(b, secs, payload));
  }
  // the deferred module: imports by slot, the grown table
  const secs = sectionsOf(d, deferred);
  const imports = dImports.map((i) => {
    if (i.module === 'primary' && i.kind === 0 && slotOf.has(i.name)) return { ...i, name: `${SLOT_PREFIX}${slotOf.get(i.name)}` };
    if (i.module === 'primary' && i.kind === 1) {
      const [own] = readLimits(Buffer.from(i.desc), 1);
      if (own.min !== limits.min || own.max !== limits.max) throw new Error(`split_slots: ${deferred} imports a table of other limits than the initial module's`);
      return { ...i, desc: [i.desc[0], ...limitsBytes(grown)] };
    }
    return i;
  });
  writeFileSync(deferred, withPayloads(d, secs, { 2: vec(imports.map((i) => [...str(i.module), ...str(i.name), i.kind, ...i.desc])) }));
  return { moved: movable.length, slot };
}
