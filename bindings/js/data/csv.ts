// kiln.data.CsvDataset: CSV text (or a stream of it) read with papaparse, imported on first
// use, into the same items as C++'s kiln::data::CsvDataset (libcsv) with the same rules
// (kiln/data/csv.hpp): strict quotes, every record as wide as the header, numbers as
// written, errors naming the line and column.
// The reading itself (papaparse, the checks) is csv_read.ts, imported on first use.
import { fail } from '../tensor/checks.js';
import { TabularDataset, type TabularOptions } from './tabular.js';

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
    const read = await reader('CsvDataset.fromText');
    return new this(await read.readText(text, options, 'CsvDataset.fromText'));
  }

  /**
   * Reads CSV from a ReadableStream (`file.stream()`, `response.body`) or an async iterable
   * of strings or UTF-8 Uint8Arrays (a Node stream with setEncoding or not). The text is
   * collected (at most limits.maxBytes), then read as fromText.
   * @throws as fromText.
   */
  static async fromStream(stream: TextStreamLike | AsyncIterable<string | Uint8Array>, options?: CsvOptions): Promise<CsvDataset> {
    const read = await reader('CsvDataset.fromStream');
    return this.fromText(await read.collectStream(stream, options, 'CsvDataset.fromStream'), options);
  }
}

/** csv_read.ts, imported once on first use. */
function reader(op: string): Promise<typeof import('./csv_read.js')> {
  return import('./csv_read.js').catch((err: unknown) => {
    throw fail('Io', `${op}: cannot load the CSV reader (${String((err as Error)?.message ?? err)})`);
  });
}
