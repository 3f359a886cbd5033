// CsvDataset's reading (csv.ts), imported on first use: CSV text read with papaparse,
// itself imported on first use, into the same items as C++'s kiln::data::CsvDataset (libcsv)
// with the same rules (kiln/data/csv.hpp): strict quotes, every record as wide as the
// header, numbers as written, errors naming the line and column.
import { describe, fail } from '../tensor/checks.js';
import type { CsvOptions, TextStreamLike } from './csv.js';
import { LABEL, quoteValue, resolveOptions, TableBuilder, UNUSED, utf8Length } from './table_builder.js';
import type { TabularParts } from './tabular.js';

interface PapaResult { data: string[]; errors: { type: string; code: string; message: string }[]; meta: { cursor: number } }
interface PapaParser { abort(): void }
interface Papa {
  parse(text: string, config: {
    delimiter: string; quoteChar: string; escapeChar: string; newline: string; skipEmptyLines: boolean;
    step(result: PapaResult, parser: PapaParser): void;
  }): void;
}

let papa: Promise<Papa> | null = null;
/** papaparse, imported once on first use (never at init: it is not needed until then). */
function loadPapa(): Promise<Papa> {
  papa ??= import('papaparse').then((m) => ((m as { default?: Papa }).default ?? (m as unknown as Papa)), (err: unknown) => {
    papa = null;
    throw fail('Value', `CsvDataset: cannot import papaparse (${String((err as Error)?.message ?? err)})`);
  });
  return papa;
}

const NUMBER = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const INTEGER = /^[+-]?\d+$/;

function trim(s: string): string {
  return s.replace(/^[ \t]+|[ \t]+$/g, '');
}

/** Line breaks (CRLF, CR, LF) in s[from, to). */
function lineBreaks(s: string, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) {
    const c = s.charCodeAt(i);
    if (c === 10) n++;
    else if (c === 13 && s.charCodeAt(i + 1) !== 10) n++;
  }
  return n;
}

/**
 * The offset in `raw` (one record as written) of the first quote that libcsv's strict mode
 * refuses (a quote inside an unquoted field, or text after a closing quote), or -1.
 */
function badQuote(raw: string, delim: string, quote: string): number {
  let state = 0; // 0 field start, 1 unquoted, 2 quoted, 3 quote seen inside quoted
  for (let i = 0; i < raw.length; i++) {
    const ch = raw[i];
    switch (state) {
      case 0: state = ch === quote ? 2 : ch === delim ? 0 : 1; break;
      case 1: if (ch === quote) return i; if (ch === delim) state = 0; break;
      case 2: if (ch === quote) state = 3; break;
      default:
        if (ch === quote) state = 2;
        else if (ch === delim) state = 0;
        else if (ch === '\r' || ch === '\n') state = 0;
        else return i;
    }
  }
  return -1;
}

/** UTF-8 bytes -> text (a UTF-8 BOM dropped), after the checks C++ makes on bytes. */
function decode(bytes: Uint8Array, prefix: string, maxBytes: number): string {
  if (bytes.length > maxBytes) throw fail('Limit', `${prefix}: ${bytes.length} bytes, more than max_bytes = ${maxBytes}`);
  if (bytes.length >= 2 && ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff))) {
    throw fail('Format', `${prefix}: the text starts with a UTF-16 byte-order mark (${bytes[0] === 0xff ? 'FF FE' : 'FE FF'}); save the file as UTF-8`);
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw fail('Format', `${prefix}: the text is not valid UTF-8`);
  }
}

function parseText(Papa: Papa, text: string, options: CsvOptions | undefined, op: string): TabularParts {
  const opts = resolveOptions(options, op, ['delimiter', 'quote', 'source']);
  const o = (options ?? {}) as CsvOptions;
  if (o.source !== undefined && typeof o.source !== 'string') throw fail('Type', `${op}: source must be a string, got ${describe(o.source)}`);
  const prefix = `CsvDataset: ${o.source ?? 'bytes'}`;
  const delim = o.delimiter ?? ',';
  const quote = o.quote ?? '"';
  for (const [what, c] of [['delimiter', delim], ['quote', quote]] as const) {
    if (typeof c !== 'string' || c.length !== 1) throw fail('Type', `${op}: ${what} must be one character, got ${describe(c)}`);
  }
  if (delim === quote || delim === '\n' || delim === '\r' || quote === '\n' || quote === '\r') {
    throw fail('Value', `${prefix}: bad CsvFormat: delimiter and quote must differ and not be line breaks`);
  }
  const bytes = utf8Length(text);
  if (bytes > opts.limits.maxBytes) throw fail('Limit', `${prefix}: ${bytes} bytes, more than max_bytes = ${opts.limits.maxBytes}`);
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  const nul = text.indexOf('\0');
  if (nul >= 0) throw fail('Format', `${prefix}: line ${1 + lineBreaks(text, 0, nul)}: a NUL byte (binary data, not CSV text)`);

  const builder = new TableBuilder(prefix, 'line', opts);
  let header = false;
  let cursor = 0;
  let line = 1;
  let error: unknown = null;
  const onRecord = (fields: string[], raw: string, start: number): void => {
    const bad = badQuote(raw, delim, quote);
    if (bad >= 0) {
      throw fail('Format', `${prefix}: line ${start + lineBreaks(raw, 0, bad)}: malformed quotes (a quote inside an unquoted field, or text after a closing quote; a quote in a field is written "" inside a quoted field)`);
    }
    const max = opts.limits.maxFieldBytes;
    const checkField = (text: string, c: number): void => {
      if (text.length > max / 3 && utf8Length(text) > max) {
        throw fail('Limit', `${prefix}: line ${start}, field ${c + 1}: ${utf8Length(text)} bytes, more than max_field_bytes = ${max}`);
      }
    };
    if (!header) {
      header = true;
      if (fields.length > opts.limits.maxColumns) {
        throw fail('Limit', `${prefix}: line ${start} (the header): more than max_columns = ${opts.limits.maxColumns} columns`);
      }
      fields.forEach(checkField);
      builder.setColumns(fields);
      return;
    }
    const ncols = builder.numColumns;
    builder.beginRow(start);
    const n = Math.min(fields.length, ncols);
    for (let c = 0; c < n; c++) {
      const text = fields[c];
      checkField(text, c);
      const role = builder.role(c);
      if (role === UNUSED) continue;
      if (role === LABEL) {
        if (text === '') builder.labelMissing(c, 'empty field');
        if (builder.labelType === 'string') {
          builder.labelText(c, text);
          continue;
        }
        const t = trim(text);
        if (!INTEGER.test(t)) throw fail('Value', `${builder.at(c)}: expected a class id (an integer), got ${quoteValue(text)}`);
        builder.labelInt(c, Number(t), t);
        continue;
      }
      if (text === '') {
        builder.featureMissing(c);
        continue;
      }
      const t = trim(text);
      if (!NUMBER.test(t)) throw fail('Value', `${builder.at(c)}: expected a number, got ${quoteValue(text)}`);
      builder.feature(c, Number(t));
    }
    if (fields.length > ncols) {
      checkField(fields[ncols], ncols);
      throw fail('Format', `${prefix}: line ${start}: expected ${ncols} fields (as the header), got more`);
    }
    if (fields.length < ncols) throw fail('Format', `${prefix}: line ${start}: expected ${ncols} fields (as the header), got ${fields.length}`);
  };
  Papa.parse(text, {
    delimiter: delim, quoteChar: quote, escapeChar: quote, newline: '', skipEmptyLines: false,
    step(result, parser) {
      if (error !== null) return;
      const end = result.meta.cursor;
      const raw = text.slice(cursor, end);
      const start = line;
      cursor = end;
      line += lineBreaks(raw, 0, raw.length);
      try {
        if (raw.replace(/[\r\n]+$/, '') === '') return; // an empty line (libcsv skips them too)
        const missing = result.errors.find((e) => e.code === 'MissingQuotes');
        if (missing !== undefined && badQuote(raw, delim, quote) < 0) {
          throw fail('Format', `${prefix}: line ${start}: a quoted field is not closed at the end of the input (unbalanced quote)`);
        }
        onRecord(result.data, raw, start);
        const other = result.errors.find((e) => e.type === 'Quotes');
        if (other !== undefined) throw fail('Format', `${prefix}: line ${start}: ${other.message}`);
      } catch (err) {
        error = err;
        parser.abort();
      }
    },
  });
  if (error !== null) throw error;
  if (!header) throw fail('Format', `${prefix}: no header row (the input is ${text.length === 0 ? 'empty' : 'blank lines only'})`);
  return builder.finish();
}

/** Collects a stream's text: strings or UTF-8 bytes, at most maxBytes. */
async function collect(source: unknown, op: string, prefix: string, maxBytes: number): Promise<string | Uint8Array> {
  let chunks: AsyncIterable<unknown>;
  const s = source as { getReader?: TextStreamLike['getReader']; [Symbol.asyncIterator]?: unknown };
  if (s !== null && typeof s === 'object' && typeof s.getReader === 'function') {
    const reader = s.getReader();
    chunks = (async function* () {
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) return;
          yield value;
        }
      } finally {
        reader.releaseLock();
      }
    })();
  } else if (s !== null && typeof s === 'object' && typeof s[Symbol.asyncIterator] === 'function') {
    chunks = s as AsyncIterable<unknown>;
  } else {
    throw fail('Type', `${op}: expected a ReadableStream or an async iterable of strings or Uint8Arrays, got ${describe(source)}`);
  }
  const texts: string[] = [];
  const parts: Uint8Array[] = [];
  let bytes = 0;
  for await (const chunk of chunks) {
    if (typeof chunk === 'string') {
      if (parts.length > 0) throw fail('Type', `${op}: a stream must give only strings or only Uint8Arrays`);
      bytes += utf8Length(chunk);
      texts.push(chunk);
    } else if (chunk instanceof Uint8Array) {
      if (texts.length > 0) throw fail('Type', `${op}: a stream must give only strings or only Uint8Arrays`);
      bytes += chunk.length;
      parts.push(chunk);
    } else {
      throw fail('Type', `${op}: a stream chunk must be a string or a Uint8Array, got ${describe(chunk)}`);
    }
    if (bytes > maxBytes) throw fail('Limit', `${prefix}: more than max_bytes = ${maxBytes} bytes`);
  }
  if (texts.length > 0) return texts.join('');
  const all = new Uint8Array(bytes);
  let at = 0;
  for (const p of parts) {
    all.set(p, at);
    at += p.length;
  }
  return all;
}

/** CsvDataset.fromText's reading: the parts of the dataset (the checks and messages as before the split). */
export async function readText(text: string | Uint8Array | ArrayBuffer, options: CsvOptions | undefined, op: string): Promise<TabularParts> {
  const Papa = await loadPapa();
  const opts = resolveOptions(options, op, ['delimiter', 'quote', 'source']);
  const prefix = `CsvDataset: ${options?.source ?? 'bytes'}`;
  let s: string;
  if (typeof text === 'string') s = text;
  else if (text instanceof Uint8Array) s = decode(text, prefix, opts.limits.maxBytes);
  else if (text instanceof ArrayBuffer) s = decode(new Uint8Array(text), prefix, opts.limits.maxBytes);
  else throw fail('Type', `${op}: expected a string, Uint8Array or ArrayBuffer, got ${describe(text)}`);
  return parseText(Papa, s, options, op);
}

/** CsvDataset.fromStream's collecting: the stream's text or bytes (at most limits.maxBytes). */
export async function collectStream(stream: unknown, options: CsvOptions | undefined, op: string): Promise<string | Uint8Array> {
  const opts = resolveOptions(options, op, ['delimiter', 'quote', 'source']);
  return collect(stream, op, `CsvDataset: ${options?.source ?? 'bytes'}`, opts.limits.maxBytes);
}
