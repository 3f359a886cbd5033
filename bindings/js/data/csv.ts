// kiln.data.CsvDataset: CSV text (or a stream of it) read with papaparse, imported on first
// use, into the same items as C++'s kiln::data::CsvDataset (libcsv) with the same rules
// (kiln/data/csv.hpp): strict quotes, every record as wide as the header, numbers as
// written, errors naming the line and column.
import { describe, fail } from '../tensor/checks.js';
import {
  LABEL, quoteValue, resolveOptions, TableBuilder, TabularDataset, UNUSED, utf8Length, type TabularOptions, type TabularParts,
} from './tabular.js';

/** The CSV dialect (C++ kiln::data::CsvFormat). */
export interface CsvFormat {
  /** Default ','. */
  delimiter?: string;
  /** Default '"'. */
  quote?: string;
}

/** new/fromText/fromStream options: the TabularOptions plus the CSV dialect and a name for messages. */
export interface CsvOptions extends TabularOptions, CsvFormat {
  /** How errors name the input (default 'bytes', as C++ from_bytes). */
  source?: string;
}

/**
 * A web ReadableStream of text or UTF-8 bytes, typed by what fromStream uses of it (the
 * package's declarations need no DOM library).
 */
export interface TextStreamLike {
  getReader(): { read(): Promise<{ done: boolean; value?: string | Uint8Array }>; releaseLock(): void };
}

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

/**
 * The rows of a CSV text as items `{features: Float32Array, label}` (C++
 * `kiln::data::CsvDataset`; the same rules, items and messages, kiln/data/csv.hpp): header
 * row, feature columns chosen by name (default all but the label), numeric features, an
 * int or string label (`classes` keeps the mapping), quoted fields, missing values refused
 * or filled (`fillMissing`), limits. papaparse is imported on first use.
 *
 *   const ds = await kiln.data.CsvDataset.fromText(text, {label: 'species', labelType: 'string'});
 *   ds.get(0);  // {features: Float32Array [4], label: 0}; ds.classes[0] === 'setosa'
 *
 * Line endings are detected from the text by papaparse (LF, CRLF or CR); a file mixing
 * them may read differently from C++, which takes each as a line end.
 */
export class CsvDataset extends TabularDataset {
  /**
   * Reads CSV from a string, or UTF-8 bytes (a Uint8Array or ArrayBuffer, as from
   * `await file.arrayBuffer()`).
   * @throws KilnError `Format` (malformed CSV: no header, duplicate or empty column names,
   *   ragged rows, bad quotes, UTF-16 or invalid UTF-8, NUL bytes), `Value` (unknown column,
   *   not a number, bad or unknown label, missing value), `Limit` (options.limits), `Type`
   *   for bad arguments; each names the source, line and column.
   */
  static async fromText(text: string | Uint8Array | ArrayBuffer, options?: CsvOptions): Promise<CsvDataset> {
    const op = 'CsvDataset.fromText';
    const Papa = await loadPapa();
    const opts = resolveOptions(options, op, ['delimiter', 'quote', 'source']);
    const prefix = `CsvDataset: ${options?.source ?? 'bytes'}`;
    let s: string;
    if (typeof text === 'string') s = text;
    else if (text instanceof Uint8Array) s = decode(text, prefix, opts.limits.maxBytes);
    else if (text instanceof ArrayBuffer) s = decode(new Uint8Array(text), prefix, opts.limits.maxBytes);
    else throw fail('Type', `${op}: expected a string, Uint8Array or ArrayBuffer, got ${describe(text)}`);
    return new this(parseText(Papa, s, options, op));
  }

  /**
   * Reads CSV from a ReadableStream (`file.stream()`, `response.body`) or an async iterable
   * of strings or UTF-8 Uint8Arrays (a Node stream with setEncoding or not). The text is
   * collected (at most limits.maxBytes), then read as fromText.
   * @throws as fromText.
   */
  static async fromStream(stream: TextStreamLike | AsyncIterable<string | Uint8Array>, options?: CsvOptions): Promise<CsvDataset> {
    const op = 'CsvDataset.fromStream';
    const opts = resolveOptions(options, op, ['delimiter', 'quote', 'source']);
    const text = await collect(stream, op, `CsvDataset: ${options?.source ?? 'bytes'}`, opts.limits.maxBytes);
    return this.fromText(text, options);
  }
}
