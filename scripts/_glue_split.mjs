import { measure } from './size.mjs';
import { splitChunk, runtime } from './split_js.mjs';
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
const gz = (s) => gzipSync(s, { level: 9 }).length;
const page = process.argv[2] ?? 'inference';
const m = await measure([page], { coverage: true });
for (const s of m[page].coverage) {
  if (!/kiln-core[-a-z]*\.mjs$/.test(s.url)) continue;
  const file = s.url.replace(/.*\/dist\//, 'dist/');
  const code = readFileSync(file, 'utf8');
  const byEnd = new Map();
  for (const f of s.functions) { const r = f.ranges[0]; if (!byEnd.has(r.endOffset)) byEnd.set(r.endOffset, []); byEnd.get(r.endOffset).push(r); }
  const called = (fn) => { let best = null; for (const r of byEnd.get(fn.end) ?? []) if (r.startOffset <= fn.start && (!best || r.startOffset > best.startOffset)) best = r; return best === null || best.count > 0; };
  const sp = splitChunk(code, called, 'x.deferred.txt');
  const rt = runtime('x.deferred.txt', sp.moduleNames, '/*0123456789abcdef*/');
  console.log(file, 'moved', sp.count, 'gz before', gz(code), 'after', gz(sp.code), 'with runtime', gz(rt + sp.code), 'deferred', gz(sp.deferred));
}
