// The tutorial's Markdown loader, shared by the page (at build time, through a Vite plugin)
// and the Node runner: splits a step file into prose, static code and cells.
//
// Fenced blocks by info string (BRIEF16.md's contract):
//   ```rust                                   Burn's code (static)
//   ```cpp file=<path> region=<NAME>          empty body; the lines between `// [NAME]` and
//                                             `// [/NAME]` of <path> (a build error if missing)
//   ```js cell=<id> [exercise]                a runnable cell
//   ```js                                     static JS
// A rust and/or cpp block directly before a cell becomes the cell's `compare` pair.
import { marked } from 'marked';

const CELL_ID = /^[a-z0-9][a-z0-9-]*$/;

/**
 * Parses a fenced block's info string: `js cell=s01-a exercise` ->
 * {lang: 'js', attrs: {cell: 's01-a'}, flags: ['exercise']}.
 */
export function parseInfo(info) {
  const [lang = '', ...rest] = String(info ?? '').trim().split(/\s+/);
  const attrs = {};
  const flags = [];
  for (const word of rest) {
    const eq = word.indexOf('=');
    if (eq > 0) attrs[word.slice(0, eq)] = word.slice(eq + 1).replace(/^"(.*)"$/, '$1');
    else if (word) flags.push(word);
  }
  return { lang: lang.toLowerCase(), attrs, flags };
}

/**
 * The lines of `source` between `// [name]` and `// [/name]` (markers excluded, common
 * indentation removed, no trailing blank lines).
 * @throws {Error} when a marker is missing.
 */
export function extractRegion(source, name, label = 'file') {
  const lines = String(source).split(/\r?\n/);
  const open = lines.findIndex((l) => l.trim() === `// [${name}]`);
  const close = lines.findIndex((l, i) => i > open && l.trim() === `// [/${name}]`);
  if (open < 0) throw new Error(`${label}: region "${name}" not found (no line "// [${name}]")`);
  if (close < 0) throw new Error(`${label}: region "${name}" is not closed (no line "// [/${name}]")`);
  const body = lines.slice(open + 1, close);
  while (body.length && !body[body.length - 1].trim()) body.pop();
  while (body.length && !body[0].trim()) body.shift();
  const indent = Math.min(...body.filter((l) => l.trim()).map((l) => /^\s*/.exec(l)[0].length), Infinity);
  return body.map((l) => l.slice(Number.isFinite(indent) ? indent : 0)).join('\n');
}

/**
 * Parses one step file.
 * @param {string} markdown the file's text
 * @param {object} opts
 * @param {string} opts.name the file name (e.g. `01-tensors.md`), for messages and the slug
 * @param {(path: string) => string} opts.readFile reads a repo-relative file (the C++ of
 *   `cpp file=` blocks); throws if missing
 * @returns {{name: string, slug: string, step: number, title: string, blocks: object[], cells: object[]}}
 *   blocks, in order: {type: 'prose', markdown} | {type: 'code', lang, code} |
 *   {type: 'cell', id, code, exercise, compare: {rust?, cpp?: {code, file, region}} | null};
 *   cells: the cell blocks.
 * @throws {Error} on a missing title, a bad or duplicate cell id, a missing C++ region.
 */
export function parseStep(markdown, { name, readFile }) {
  const tokens = marked.lexer(String(markdown));
  const first = tokens.find((t) => t.type !== 'space');
  const m = first?.type === 'heading' && first.depth === 1 ? /^Step\s+(\d+)\s*[—–-]\s*(.+)$/.exec(first.text.trim()) : null;
  if (!m) throw new Error(`${name}: the first line must be "# Step N — Title"`);
  const step = Number(m[1]);
  const title = m[2].trim();
  const blocks = [];
  let prose = [];
  const flush = () => {
    const text = prose.join('');
    if (text.trim()) blocks.push({ type: 'prose', markdown: text });
    prose = [];
  };
  const ids = new Set();
  for (const tok of tokens) {
    if (tok === first) continue;
    if (tok.type !== 'code' || tok.codeBlockStyle === 'indented') {
      prose.push(tok.raw);
      continue;
    }
    const { lang, attrs, flags } = parseInfo(tok.lang);
    if (lang === 'cpp' && attrs.file) {
      flush();
      if (!attrs.region) throw new Error(`${name}: cpp block for ${attrs.file} has no region=`);
      let source;
      try {
        source = readFile(attrs.file);
      } catch (e) {
        throw new Error(`${name}: cannot read ${attrs.file} (${e?.message ?? e})`);
      }
      const code = extractRegion(source, attrs.region, `${name}: ${attrs.file}`);
      blocks.push({ type: 'code', lang: 'cpp', code, file: attrs.file, region: attrs.region });
    } else if ((lang === 'js' || lang === 'javascript') && attrs.cell !== undefined) {
      flush();
      const id = attrs.cell;
      if (!CELL_ID.test(id)) throw new Error(`${name}: bad cell id "${id}" (lowercase letters, digits and -)`);
      if (ids.has(id)) throw new Error(`${name}: duplicate cell id "${id}"`);
      ids.add(id);
      // A rust and/or cpp block directly before the cell (prose in between breaks the pair).
      const compare = {};
      for (let k = 0; k < 2; k++) {
        const prev = blocks[blocks.length - 1];
        if (prev?.type !== 'code' || (prev.lang !== 'rust' && prev.lang !== 'cpp') || compare[prev.lang]) break;
        compare[prev.lang] = blocks.pop();
      }
      blocks.push({
        type: 'cell',
        id,
        code: tok.text,
        exercise: flags.includes('exercise'),
        compare: compare.rust || compare.cpp ? compare : null,
      });
    } else {
      flush();
      blocks.push({ type: 'code', lang, code: tok.text });
    }
  }
  flush();
  const slug = String(name).replace(/\.md$/, '');
  return { name, slug, step, title, blocks, cells: blocks.filter((b) => b.type === 'cell') };
}

/**
 * Checks a whole tutorial (steps in file order): cell ids unique over all steps.
 * @param {ReturnType<typeof parseStep>[]} steps
 * @throws {Error} on a duplicate id.
 */
export function checkTutorial(steps) {
  const seen = new Map();
  for (const s of steps) {
    for (const c of s.cells) {
      if (seen.has(c.id)) throw new Error(`cell id "${c.id}" is in both ${seen.get(c.id)} and ${s.name}`);
      seen.set(c.id, s.name);
    }
  }
  return steps;
}
