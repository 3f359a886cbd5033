// Coverage of the API items of Burn's tutorial chapter and docs summary (tests/js/coverage/
// api_items.mjs) in Kiln C++ and in kiln-dl: every item claimed for C++ has a declaration
// under engine/include, every item claimed for JS exists on an initialized kiln. The table
// (with the gaps) is written to test-output/api-coverage.md.
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ITEMS } from './coverage/api_items.mjs';
import { init } from 'kiln-dl';
import { ROOT } from './support/train_helpers.mjs';

function headers(dir, out = []) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) headers(p, out);
    else if (p.endsWith('.hpp') || p.endsWith('.def')) out.push(readFileSync(p, 'utf8'));
  }
  return out;
}

/** The value at `path` on kiln: 'a.b', 'a.B#method' (prototype member), 'new:a.B' (a class). */
function resolve(kiln, path) {
  const ctor = path.startsWith('new:');
  const [objPath, member] = (ctor ? path.slice(4) : path).split('#');
  let v = kiln;
  for (const part of objPath.split('.')) {
    if (v === undefined || v === null) return undefined;
    v = v[part];
  }
  if (ctor && typeof v !== 'function') return undefined;
  if (member !== undefined) {
    if (typeof v !== 'function') return undefined;
    let proto = v.prototype;
    while (proto && !Object.prototype.hasOwnProperty.call(proto, member)) proto = Object.getPrototypeOf(proto);
    return proto ? Object.getOwnPropertyDescriptor(proto, member) : undefined;
  }
  return v;
}

describe('API coverage of the Burn chapter', () => {
  let kiln;
  let source;
  beforeAll(async () => {
    kiln = await init();
    source = headers(join(ROOT, 'engine/include')).join('\n');
  });

  it('every item claimed for C++ is declared in engine/include, every item claimed for JS exists', () => {
    const missing = [];
    for (const [step, item, cpp, js] of ITEMS) {
      if (cpp && !cpp.test(source)) missing.push(`C++ ${step}: ${item} (${cpp})`);
      if (js && resolve(kiln, js) === undefined) missing.push(`JS ${step}: ${item} (${js})`);
    }
    expect(missing).toEqual([]);
  });

  it('writes the table', () => {
    const rows = ITEMS.map(([step, item, cpp, js]) => `| ${step} | ${item} | ${cpp ? 'yes' : '—'} | ${js ? `\`${js.replace(/^new:/, 'new ')}\`` : '—'} |`);
    const inCpp = ITEMS.filter((r) => r[2]).length;
    const inJs = ITEMS.filter((r) => r[3]).length;
    const text = `# API items of Burn's chapter 1 and docs summary in Kiln\n\n${ITEMS.length} items; C++ ${inCpp}, JS ${inJs}.\n\n| where | item | C++ | JS |\n|---|---|---|---|\n${rows.join('\n')}\n`;
    mkdirSync(join(ROOT, 'test-output'), { recursive: true });
    writeFileSync(join(ROOT, 'test-output/api-coverage.md'), text);
    expect(inJs).toBeGreaterThan(0);
  });
});
