import { measure } from './size.mjs';
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
const m = await measure(['inference'], { coverage: true });
for (const s of m.inference.coverage) {
  if (!s.url.includes('kiln-core-inference.mjs')) continue;
  const src = readFileSync('dist/kiln-core-inference.mjs', 'utf8');
  // functions with count 0 (outermost)
  const dead = [];
  for (const f of s.functions) { const r = f.ranges[0]; if (r.count === 0) dead.push([r.startOffset, r.endOffset, f.functionName]); }
  dead.sort((a, b) => a[0] - b[0]);
  const outer = []; let end = -1;
  for (const d of dead) { if (d[0] >= end) { outer.push(d); end = d[1]; } }
  let tot = 0; for (const d of outer) tot += d[1] - d[0];
  console.log('glue', src.length, 'dead outermost fns', outer.length, 'bytes', tot);
  const kept = outer.reduceRight((acc, d) => acc.slice(0, d[0]) + acc.slice(d[1]), src);
  console.log('gz full', gzipSync(src, { level: 9 }).length, 'gz without dead', gzipSync(kept, { level: 9 }).length);
  for (const d of outer.sort((a, b) => (b[1] - b[0]) - (a[1] - a[0])).slice(0, 40)) console.log(d[1] - d[0], d[2], src.slice(d[0], d[0] + 100).replace(/\n/g, ' '));
}
