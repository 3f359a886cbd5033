#!/usr/bin/env node
// Rewrites clang 14's prototype relaxed-SIMD FMA into the final instruction, with a real
// parser of the WebAssembly binary (never a byte search):
//
//   f32x4.fma (prototype, 0xfd 0xaf 0x01)  ->  f32x4.relaxed_madd (final, 0xfd 0x85 0x02 = 0x105)
//
// Why: Emscripten 3.1.6's clang 14 knows relaxed SIMD only as the prototype: with
// -mrelaxed-simd, __builtin_wasm_fma_f32x4(a, b, c) emits opcode 0xaf, which shipping
// engines (Chromium, Node 20 with --experimental-wasm-relaxed-simd) reject; the final opcode
// is 0x105 (WebAssembly/relaxed-simd, proposals/relaxed-simd/Overview.md, "Binary format").
// Both encodings are 3 bytes, so the rewrite changes no size, offset or section length.
// Operands: the instruction pops a, b, c in the order they were pushed; the final
// relaxed_madd(a, b, c) = a·b + c (one or two roundings, the engine's choice), which is
// what engine/src/cpu/madd.hpp asks for by passing (a, b, c) to the builtin. (The prototype
// meant a + b·c: relaxed-simd issue #27, reordered in PR #81 in 2022; no code relies on the
// prototype's meaning, as no engine runs it.)
//
// The parser walks the module's sections (ids and order checked, each length consumed
// exactly) and every instruction of every function body (immediates decoded per opcode,
// blocks balanced, each body ending on its last `end`). It refuses anything it does not
// know: another relaxed-SIMD prototype opcode, an already-final relaxed opcode, an unknown
// or gap opcode, an atomic (0xfe) opcode outside the threads proposal's, a non-minimal opcode
// encoding. (Atomics are decoded: the threaded build has a relaxed variant too.) A build step must never ship a module it did not fully understand.
//
// CLI (CMakeLists.txt runs it after linking the relaxed build):
//   node scripts/relax_wasm.mjs IN.wasm OUT.wasm [--min-rewrites N] [--same-glue A B]...
//   node scripts/relax_wasm.mjs --scan X.wasm       counts, per function, of f32x4.fma /
//                                                   relaxed_madd (verification, tests)
// --same-glue fails unless the two Emscripten glue files are byte-identical (the relaxed
// build's kiln.mjs and the SIMD128 build's dist/kiln.mjs, so one glue loads both); it may
// repeat (the threaded build also checks its kiln-mt.worker.js).
import { readFileSync, writeFileSync, renameSync } from 'node:fs';

/** Prototype f32x4.fma and final f32x4.relaxed_madd, as SIMD sub-opcodes (after 0xfd). */
export const PROTOTYPE_FMA = 0xaf;
export const RELAXED_MADD = 0x105;

/** Prototype relaxed-SIMD opcodes (Overview.md's table): all refused except f32x4.fma. */
const PROTOTYPE_RELAXED = new Map([
  [0xa2, 'i8x16.relaxed_swizzle'], [0xa5, 'i32x4.relaxed_trunc_f32x4_s'],
  [0xa6, 'i32x4.relaxed_trunc_f32x4_u'], [0xc5, 'i32x4.relaxed_trunc_f64x2_s_zero'],
  [0xc6, 'i32x4.relaxed_trunc_f64x2_u_zero'], [0xaf, 'f32x4.fma'], [0xb0, 'f32x4.fms'],
  [0xcf, 'f64x2.fma'], [0xd0, 'f64x2.fms'], [0xb2, 'i8x16.laneselect'],
  [0xb3, 'i16x8.laneselect'], [0xd2, 'i32x4.laneselect'], [0xd3, 'i64x2.laneselect'],
  [0xb4, 'f32x4.relaxed_min'], [0xe2, 'f32x4.relaxed_max'], [0xd4, 'f64x2.relaxed_min'],
  [0xee, 'f64x2.relaxed_max'],
]);
/** Gaps of the final SIMD128 opcode space 0x5e..0xff that were never prototype opcodes. */
const SIMD_GAPS = new Set([0x9a, 0xbb, 0xc2]);

class WasmError extends Error {}

/** A cursor over the module's bytes with the LEB128 readers of the binary format. */
export class Reader {
  constructor(bytes, pos = 0, end = bytes.length) {
    this.bytes = bytes;
    this.pos = pos;
    this.end = end;
  }
  fail(what) {
    throw new WasmError(`relax_wasm: ${what} at byte offset 0x${this.pos.toString(16)}`);
  }
  byte() {
    if (this.pos >= this.end) this.fail('unexpected end of data');
    return this.bytes[this.pos++];
  }
  skip(n) {
    if (this.pos + n > this.end) this.fail(`unexpected end of data (need ${n} bytes)`);
    this.pos += n;
  }
  /** Unsigned LEB128 of at most `bits` bits; returns a Number (bits <= 32) . */
  u32() {
    let result = 0;
    let shift = 0;
    for (let i = 0; i < 5; ++i) {
      const b = this.byte();
      result += (b & 0x7f) * 2 ** shift;
      if ((b & 0x80) === 0) {
        if (result > 0xffffffff) this.fail('u32 out of range');
        return result;
      }
      shift += 7;
    }
    return this.fail('u32 LEB128 longer than 5 bytes');
  }
  /** Signed LEB128 of at most `bits` bits (value discarded: only its length matters). */
  sleb(bits) {
    const maxBytes = Math.ceil(bits / 7);
    for (let i = 0; i < maxBytes; ++i) {
      if ((this.byte() & 0x80) === 0) return;
    }
    this.fail(`s${bits} LEB128 too long`);
  }
}

const VALTYPES = new Set([0x7f, 0x7e, 0x7d, 0x7c, 0x7b, 0x70, 0x6f]);

function blockType(r) {
  const b = r.bytes[r.pos];
  if (b === 0x40 || VALTYPES.has(b)) {
    r.pos += 1;
    return;
  }
  r.sleb(33); // a type index
}

function memarg(r) {
  r.u32(); // alignment exponent
  r.u32(); // offset
}

/**
 * Decodes one SIMD instruction (after the 0xfd prefix) and returns its sub-opcode.
 * Immediates follow the final SIMD128 spec; prototype relaxed opcodes other than f32x4.fma,
 * final relaxed opcodes (0x100..) and gaps are refused.
 */
function simdInstruction(r, acceptFinalMadd) {
  const at = r.pos;
  const op = r.u32();
  const minimal = op < 0x80 ? 1 : op < 0x4000 ? 2 : 3;
  if (r.pos - at !== minimal) r.fail(`non-minimal SIMD opcode encoding 0x${op.toString(16)}`);
  if (op <= 0x0b || op === 0x5c || op === 0x5d) memarg(r); // loads, stores, load_zero
  else if (op === 0x0c || op === 0x0d) r.skip(16); // v128.const, i8x16.shuffle
  else if (op >= 0x15 && op <= 0x22) r.skip(1); // extract_lane / replace_lane
  else if (op >= 0x54 && op <= 0x5b) {
    memarg(r); // load_lane / store_lane
    r.skip(1);
  } else if (op === PROTOTYPE_FMA || (op === RELAXED_MADD && acceptFinalMadd)) {
    // counted (and rewritten) by the caller
  } else if (PROTOTYPE_RELAXED.has(op)) {
    r.pos = at;
    r.fail(`relaxed-SIMD prototype instruction ${PROTOTYPE_RELAXED.get(op)} (0xfd 0x${op.toString(16)}) has no rewrite here`);
  } else if (op >= 0x100) {
    r.pos = at;
    r.fail(`unexpected SIMD opcode 0x${op.toString(16)} (already-final relaxed SIMD or unknown)`);
  } else if (SIMD_GAPS.has(op)) {
    r.pos = at;
    r.fail(`unknown SIMD opcode 0x${op.toString(16)}`);
  }
  // every other opcode in 0x0e..0xff has no immediate
  return op;
}

function fcInstruction(r) {
  const op = r.u32();
  if (op <= 7) return; // trunc_sat
  switch (op) {
    case 8: r.u32(); if (r.byte() !== 0) r.fail('memory.init: memory index must be 0'); return;
    case 9: r.u32(); return; // data.drop
    case 10: if (r.byte() !== 0 || r.byte() !== 0) r.fail('memory.copy: memory index must be 0'); return;
    case 11: if (r.byte() !== 0) r.fail('memory.fill: memory index must be 0'); return;
    case 12: r.u32(); r.u32(); return; // table.init
    case 13: r.u32(); return; // elem.drop
    case 14: r.u32(); r.u32(); return; // table.copy
    case 15: case 16: case 17: r.u32(); return; // table.grow / size / fill
    default: r.fail(`unknown 0xfc instruction ${op}`);
  }
}

/**
 * Decodes one atomic instruction (after the 0xfe prefix; the threads proposal, Overview.md
 * "Instruction encoding"): notify / wait32 / wait64 and every load, store, read-modify-write
 * and cmpxchg (0x10..0x4e) take a memarg; atomic.fence takes one zero byte.
 */
function feInstruction(r) {
  const at = r.pos;
  const op = r.u32();
  const minimal = op < 0x80 ? 1 : op < 0x4000 ? 2 : op < 0x200000 ? 3 : op < 0x10000000 ? 4 : 5;
  if (r.pos - at !== minimal) r.fail(`non-minimal atomic opcode encoding 0x${op.toString(16)}`);
  if (op <= 0x02 || (op >= 0x10 && op <= 0x4e)) { memarg(r); return; }
  if (op === 0x03) { if (r.byte() !== 0) r.fail('atomic.fence: reserved byte must be 0'); return; }
  r.pos = at;
  r.fail(`unknown atomic instruction 0xfe 0x${op.toString(16)}`);
}

/**
 * Walks one function body (locals, then instructions to its final `end`) and calls
 * onSimd(op, offsetOfOpcodeLeb) for each SIMD instruction and, when given,
 * onFunction(start, end) for the LEB128 of each function index (call, ref.func).
 */
export function walkBody(r, onSimd, acceptFinalMadd, onFunction = null) {
  const groups = r.u32();
  for (let i = 0; i < groups; ++i) {
    r.u32();
    if (!VALTYPES.has(r.byte())) r.fail('unknown local type');
  }
  let depth = 1; // the body's own block
  while (depth > 0) {
    const op = r.byte();
    if (op <= 0x01 || op === 0x0f || op === 0x1a || op === 0x1b || op === 0x19) continue;
    if (op === 0x02 || op === 0x03 || op === 0x04 || op === 0x06) { blockType(r); depth += 1; continue; }
    if (op === 0x05) continue; // else
    if (op === 0x0b) { depth -= 1; continue; } // end
    if (op === 0x07 || op === 0x08) { r.u32(); continue; } // catch / throw: tag
    if (op === 0x09) { r.u32(); continue; } // rethrow: label
    if (op === 0x18) { r.u32(); depth -= 1; continue; } // delegate ends its try
    if (op === 0x0c || op === 0x0d) { r.u32(); continue; } // br / br_if
    if (op === 0x0e) { const n = r.u32(); for (let i = 0; i <= n; ++i) r.u32(); continue; }
    if (op === 0x10 || op === 0xd2) { const at = r.pos; r.u32(); onFunction?.(at, r.pos); continue; } // call, ref.func
    if (op === 0x11) { r.u32(); r.u32(); continue; } // call_indirect: type, table
    if (op === 0x1c) { const n = r.u32(); for (let i = 0; i < n; ++i) if (!VALTYPES.has(r.byte())) r.fail('select: bad type'); continue; }
    if (op >= 0x20 && op <= 0x26) { r.u32(); continue; } // locals, globals, table.get/set
    if (op >= 0x28 && op <= 0x3e) { memarg(r); continue; }
    if (op === 0x3f || op === 0x40) { if (r.byte() !== 0) r.fail('memory.size/grow: memory index must be 0'); continue; }
    if (op === 0x41) { r.sleb(32); continue; }
    if (op === 0x42) { r.sleb(64); continue; }
    if (op === 0x43) { r.skip(4); continue; }
    if (op === 0x44) { r.skip(8); continue; }
    if (op >= 0x45 && op <= 0xc4) continue; // numeric, sign extension
    if (op === 0xd0) { if (!VALTYPES.has(r.byte())) r.fail('ref.null: bad type'); continue; }
    if (op === 0xd1) continue;
    if (op === 0xfc) { fcInstruction(r); continue; }
    if (op === 0xfe) { feInstruction(r); continue; }
    if (op === 0xfd) { const at = r.pos; onSimd(simdInstruction(r, acceptFinalMadd), at); continue; }
    r.pos -= 1;
    r.fail(`unknown or unexpected instruction 0x${op.toString(16)}`);
  }
  if (r.pos !== r.end) r.fail(`function body ends ${r.end - r.pos} bytes before its size says`);
}

/** Function names from the "name" custom section (present with --profiling-funcs). */
function functionNames(bytes, start, end) {
  const names = new Map();
  const r = new Reader(bytes, start, end);
  try {
    while (r.pos < r.end) {
      const id = r.byte();
      const size = r.u32();
      const next = r.pos + size;
      if (id === 1) {
        const n = r.u32();
        for (let i = 0; i < n; ++i) {
          const index = r.u32();
          const len = r.u32();
          names.set(index, new TextDecoder().decode(bytes.subarray(r.pos, r.pos + len)));
          r.skip(len);
        }
      }
      r.pos = next;
    }
  } catch {
    // names are for messages only
  }
  return names;
}

/**
 * Parses a module; with rewrite, replaces each f32x4.fma by f32x4.relaxed_madd (on a copy);
 * with scan, also accepts (and counts) final relaxed_madd instructions instead of refusing
 * them. Returns the bytes, the counts and, per function holding either, its index, name
 * (from the "name" section when linked with --profiling-funcs) and count.
 * @throws Error on anything the parser does not understand.
 */
export function processWasm(input, { rewrite = false, scan = false } = {}) {
  const bytes = Uint8Array.from(input);
  const r = new Reader(bytes);
  const magic = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00];
  for (const m of magic) if (r.byte() !== m) { r.pos -= 1; r.fail('not a WebAssembly 1.0 module'); }
  let importedFunctions = 0;
  let lastId = 0;
  let code = null;
  let nameSection = null;
  const order = [1, 2, 3, 4, 5, 13, 6, 7, 8, 9, 12, 10, 11]; // 13 = tag (exceptions)
  while (r.pos < r.end) {
    const id = r.byte();
    const size = r.u32();
    const start = r.pos;
    if (start + size > r.end) r.fail(`section ${id} runs past the end of the module`);
    if (id === 0) {
      const nameLen = r.u32();
      const name = new TextDecoder().decode(bytes.subarray(r.pos, r.pos + nameLen));
      if (name === 'name') nameSection = [r.pos + nameLen, start + size];
    } else {
      const rank = order.indexOf(id);
      if (rank < 0) r.fail(`unknown section id ${id}`);
      if (rank <= order.indexOf(lastId)) r.fail(`section ${id} out of order`);
      lastId = id;
      if (id === 2) {
        const s = new Reader(bytes, start, start + size);
        const n = s.u32();
        for (let i = 0; i < n; ++i) {
          s.skip(s.u32()); // module
          s.skip(s.u32()); // field
          const kind = s.byte();
          if (kind === 0) { importedFunctions += 1; s.u32(); }
          else if (kind === 1) { s.byte(); const f = s.byte(); s.u32(); if (f & 1) s.u32(); }
          else if (kind === 2) { const f = s.byte(); s.u32(); if (f & 1) s.u32(); }
          else if (kind === 3) { s.byte(); s.byte(); }
          else if (kind === 4) { s.byte(); s.u32(); }
          else s.fail(`unknown import kind ${kind}`);
        }
        if (s.pos !== s.end) s.fail('import section has trailing bytes');
      }
      if (id === 10) code = [start, start + size];
    }
    r.pos = start + size;
  }
  if (!code) throw new WasmError('relax_wasm: the module has no code section');

  const names = nameSection ? functionNames(bytes, ...nameSection) : new Map();
  const counts = { prototypeFma: 0, relaxedMadd: 0, simd: 0, functions: 0 };
  const touched = new Map(); // function index -> rewrites
  const c = new Reader(bytes, code[0], code[1]);
  const bodies = c.u32();
  for (let f = 0; f < bodies; ++f) {
    const size = c.u32();
    const body = new Reader(bytes, c.pos, c.pos + size);
    const index = importedFunctions + f;
    walkBody(body, (op, at) => {
      counts.simd += 1;
      if (op === RELAXED_MADD) {
        counts.relaxedMadd += 1;
        touched.set(index, (touched.get(index) ?? 0) + 1);
        return;
      }
      if (op !== PROTOTYPE_FMA) return;
      counts.prototypeFma += 1;
      touched.set(index, (touched.get(index) ?? 0) + 1);
      if (rewrite) {
        // 0xaf 0x01 (LEB128 of 175) -> 0x85 0x02 (LEB128 of 261): same length.
        if (bytes[at] !== 0xaf || bytes[at + 1] !== 0x01) body.fail('unexpected f32x4.fma encoding');
        bytes[at] = 0x85;
        bytes[at + 1] = 0x02;
        counts.relaxedMadd += 1;
      }
    }, scan);
    c.pos += size;
  }
  counts.functions = bodies;
  if (c.pos !== c.end) c.fail('code section has trailing bytes');
  return {
    bytes,
    counts,
    touched: [...touched].map(([index, n]) => ({ index, name: names.get(index) ?? `$${index}`, count: n })),
  };
}

/** Rewrites f32x4.fma -> f32x4.relaxed_madd; see the file comment. */
export function relaxWasm(input) {
  return processWasm(input, { rewrite: true });
}

/**
 * Counts, changing nothing: counts.prototypeFma (f32x4.fma, 0xfd 0xaf) and
 * counts.relaxedMadd (f32x4.relaxed_madd, 0xfd 0x105), and the functions holding them.
 */
export function scanWasm(input) {
  return processWasm(input, { scan: true });
}

function main(argv) {
  if (argv[0] === '--scan') {
    if (argv.length !== 2) throw new WasmError('usage: relax_wasm.mjs --scan X.wasm');
    const { counts, touched } = scanWasm(readFileSync(argv[1]));
    console.log(`${argv[1]}: ${counts.functions} functions, ${counts.simd} SIMD instructions, ` +
      `${counts.relaxedMadd} f32x4.relaxed_madd, ${counts.prototypeFma} f32x4.fma (prototype)`);
    for (const t of touched) console.log(`  ${t.count}\t${t.name}`);
    return;
  }
  const [input, output, ...rest] = argv;
  if (!input || !output) {
    throw new WasmError('usage: relax_wasm.mjs IN.wasm OUT.wasm [--min-rewrites N] [--same-glue A B]...');
  }
  let minRewrites = 0;
  const glues = [];
  for (let i = 0; i < rest.length; ++i) {
    if (rest[i] === '--min-rewrites') minRewrites = Number(rest[++i]);
    else if (rest[i] === '--same-glue') {
      if (i + 2 >= rest.length) throw new WasmError('relax_wasm: --same-glue needs two files (A B)');
      glues.push([rest[++i], rest[++i]]);
    }
    else throw new WasmError(`relax_wasm: unknown option ${rest[i]}`);
  }
  const { bytes, counts, touched } = relaxWasm(readFileSync(input));
  if (counts.relaxedMadd < minRewrites) {
    throw new WasmError(`relax_wasm: ${input}: ${counts.relaxedMadd} f32x4.fma rewritten, expected at least ${minRewrites} (was the GEMM compiled with -mrelaxed-simd?)`);
  }
  // Proof by re-parsing the output: no prototype left, every rewrite now final.
  const check = scanWasm(bytes);
  if (check.counts.prototypeFma !== 0 || check.counts.relaxedMadd !== counts.relaxedMadd) {
    throw new WasmError('relax_wasm: the rewritten module does not re-parse to the same counts');
  }
  for (const [a, b] of glues) {
    let same = false;
    try {
      same = Buffer.compare(readFileSync(a), readFileSync(b)) === 0;
    } catch (e) {
      throw new WasmError(`relax_wasm: --same-glue: ${e.message} (build the SIMD128 build first: scripts/build.sh)`);
    }
    if (!same) {
      throw new WasmError(`relax_wasm: the relaxed build's glue ${a} differs from ${b}: the two builds cannot share one .mjs ` +
        '(rebuild the SIMD128 build first, or ship the relaxed glue as its own file)');
    }
  }
  writeFileSync(`${output}.tmp`, bytes);
  renameSync(`${output}.tmp`, output);
  console.log(`relax_wasm: ${output}: ${counts.relaxedMadd} f32x4.fma -> f32x4.relaxed_madd in ` +
    `${touched.length} functions (${counts.simd} SIMD instructions in ${counts.functions} functions parsed)` +
    (glues.length ? `; glue identical to ${glues.map((g) => g[1]).join(', ')}` : ''));
}

if (import.meta.url === `file://${process.argv[1]}` || process.argv[1]?.endsWith('relax_wasm.mjs')) {
  try {
    main(process.argv.slice(2));
  } catch (e) {
    console.error(e instanceof WasmError ? e.message : e);
    process.exit(1);
  }
}
