// Number and array literals for the exported programs (Python, JavaScript, C++), written so
// that each language reads back exactly the page's float32 values: a float is written as the
// shortest decimal that, read as a double and rounded to float32 (what torch.tensor(...,
// dtype=torch.float32), Float32Array.from and static_cast<float>(double) do), gives the
// same float32.

/**
 * The shortest decimal text of a float32 value that reads back as that float32 through a
 * double (at most 9 significant digits, always enough for float32).
 * @param {number} v a float32 value (anything Math.fround keeps)
 * @returns {string} e.g. "0.1", "-1.25e-7", "3"
 * @throws {RangeError} for a value that is not finite (the exporters refuse NaN / ±Infinity)
 */
export function f32Text(v) {
  if (!Number.isFinite(v)) throw new RangeError(`export: cannot write the non-finite value ${v}`);
  const target = Math.fround(v);
  if (target === 0) return Object.is(target, -0) ? '-0' : '0';
  for (let p = 1; p <= 9; p++) {
    const s = String(Number(target.toPrecision(p)));
    if (Math.fround(Number(s)) === target) return s;
  }
  return String(target); // unreachable: 9 digits always round-trip a float32
}

/** A double written so every language reads the same double (JS's shortest round trip). */
export function f64Text(v) {
  if (!Number.isFinite(v)) throw new RangeError(`export: cannot write the non-finite value ${v}`);
  return String(v);
}

/**
 * Items joined with ", " and wrapped into lines of at most `width` characters, each line
 * starting with `indent` (the caller adds the brackets).
 * @param {string[]} items
 * @returns {string}
 */
export function wrapItems(items, indent = '    ', width = 100) {
  const lines = [];
  let line = '';
  for (const item of items) {
    const next = line === '' ? item : `${line}, ${item}`;
    if (line !== '' && indent.length + next.length + 1 > width) {
      lines.push(`${indent}${line},`);
      line = item;
    } else {
      line = next;
    }
  }
  if (line !== '') lines.push(`${indent}${line}`);
  return lines.join('\n');
}

/** A flat list of float32 values as wrapped literal items (see wrapItems). */
export const floatItems = (values, indent, width) => wrapItems(Array.from(values, f32Text), indent, width);

/** A flat list of integers as wrapped literal items. */
export const intItems = (values, indent, width) => wrapItems(Array.from(values, (v) => String(v | 0)), indent, width);

/** camelCase -> snake_case (kiln-dl's JS spec keys -> the C++ SequentialConfig's JSON keys). */
export const snake = (name) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
