// The link launcher of the split engines (CMakeLists.txt, CXX_LINKER_LAUNCHER): runs the link
// command, which passes `-Wl,--print-map` to wasm-ld, and keeps the DATA part of the map that
// wasm-ld prints on stdout (where each input section's data lies in memory) in MAP_FILE for
// scripts/split_data.mjs. Every other line of stdout is passed through; the exit status is the
// link's. The map is written whole or not at all (a temporary file renamed at the end).
//
//   node scripts/link_map.mjs MAP_FILE -- COMMAND [ARGS...]
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { renameSync, rmSync, writeFileSync } from 'node:fs';

const [mapFile, dashes, command, ...args] = process.argv.slice(2);
if (!mapFile || dashes !== '--' || !command) {
  console.error('usage: node scripts/link_map.mjs MAP_FILE -- COMMAND [ARGS...]');
  process.exit(2);
}
const child = spawn(command, args, { stdio: ['inherit', 'pipe', 'inherit'] });
// A map line: Addr (hex or -), Off, Size, then the name at column 27 (output section or segment),
// 35 (input section) or 43 (symbol).
const MAP_LINE = /^ {0,8}([0-9a-f]+|-) +[0-9a-f]+ +[0-9a-f]+ /;
const kept = [];
let state = 'before'; // before DATA, inside it, after it
for await (const line of createInterface({ input: child.stdout, crlfDelay: Infinity })) {
  if (!MAP_LINE.test(line) && !line.startsWith('    Addr ')) {
    process.stdout.write(`${line}\n`);
    continue;
  }
  const topLevel = line.length > 27 && line[26] === ' ' && line[27] !== ' ';
  if (state === 'before' && topLevel && line.slice(27) === 'DATA') state = 'inside';
  else if (state === 'inside' && topLevel && line.trimStart().startsWith('-')) state = 'after';
  if (state === 'inside') kept.push(line);
}
const status = await new Promise((resolve) => child.on('close', (code, signal) => resolve(signal ? 1 : code)));
if (status === 0) {
  if (kept.length === 0) {
    console.error(`link_map: the link printed no DATA map (is -Wl,--print-map passed?): ${mapFile} not written`);
    process.exit(1);
  }
  writeFileSync(`${mapFile}.tmp`, `${kept.join('\n')}\n`);
  renameSync(`${mapFile}.tmp`, mapFile);
} else {
  rmSync(mapFile, { force: true });
}
process.exit(status);
