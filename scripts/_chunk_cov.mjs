import { measure } from './size.mjs';
import { readFileSync } from 'node:fs';
import * as acorn from 'acorn';
const page = process.argv[2] ?? 'inference';
const m = await measure([page], { coverage: true });
for (const s of m[page].coverage) {
  if (!/chunk-core-[^/]*\.js$/.test(s.url)) continue;
  const file = s.url.replace(/.*\/dist\//, 'dist/');
  const code = readFileSync(file, 'utf8');
  const dead = [];
  for (const f of s.functions) { const r = f.ranges[0]; if (r.count === 0) dead.push([r.startOffset, r.endOffset, f.functionName]); }
  dead.sort((a, b) => a[0] - b[0]);
  const outer = []; let end = -1;
  for (const d of dead) { if (d[0] >= end) { outer.push(d); end = d[1]; } }
  let tot = 0; for (const d of outer) tot += d[1] - d[0];
  console.log(file, code.length, 'dead outermost', outer.length, 'bytes', tot);
  for (const d of outer.sort((a, b) => (b[1] - b[0]) - (a[1] - a[0])).slice(0, 30)) console.log(d[1] - d[0], d[2], code.slice(d[0], d[0] + 90).replace(/\n/g, ' '));
  // top-level statements sizes
  const ast = acorn.parse(code, { ecmaVersion: 'latest', sourceType: 'module' });
  const tops = ast.body.map((n) => [n.end - n.start, n.type, code.slice(n.start, n.start + 80)]).sort((a, b) => b[0] - a[0]).slice(0, 25);
  console.log('--- top-level statements'); for (const t of tops) console.log(t[0], t[1], t[2]);
}
