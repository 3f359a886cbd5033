// kiln.data.SqliteDataset: a user's SQLite database file (bytes) opened read-only in the
// official SQLite WebAssembly build (@sqlite.org/sqlite-wasm, imported on first use: it is
// ~1 MB of wasm), read into the same items as C++'s kiln::data::SqliteDataset (libsqlite3)
// with the same rules and messages (kiln/data/sqlite.hpp, engine/src/data/table/sqlite.cpp).
// The reading itself (sqlite-wasm, the checks) is sqlite_read.ts, imported on first use.
import { fail } from '../tensor/checks.js';
import { TabularDataset, type TabularOptions } from './tabular.js';

/** SqliteDataset options: the TabularOptions and a name for messages. */
export interface SqliteOptions extends TabularOptions {
  /** How errors name the database (default 'bytes', as C++ from_bytes). */
  source?: string;
}

/**
 * The rows of an SQLite table or query as items `{features: Float32Array, label}` (Burn's
 * `SqliteDataset`; C++ `kiln::data::SqliteDataset`, the same items and messages): the
 * database's bytes (a user's file: `new Uint8Array(await file.arrayBuffer())`) opened
 * read-only in the official SQLite WebAssembly build, imported on first use; Node and
 * browsers. Features: INTEGER or REAL columns (NULL missing, see fillMissing); labels an
 * INTEGER ('int') or TEXT ('string') column.
 *
 *   const ds = await kiln.data.SqliteDataset.fromBytes(bytes, 'train', {label: 'label'});
 *
 * (Bundlers: Vite's docs for sqlite-wasm ask for `optimizeDeps: {exclude: ['@sqlite.org/sqlite-wasm']}`.)
 */
export class SqliteDataset extends TabularDataset {
  /**
   * All rows of `table`, by rowid (Burn's `SqliteDataset::from_db_file(db_file, split)`).
   * @throws KilnError `Format` if the bytes are not an SQLite database or a corrupt one,
   *   `Value` for an unknown table (listing the tables) or column, or a value of the wrong
   *   type (naming row and column), `Limit` past options.limits, `Type` for bad arguments.
   */
  static async fromBytes(bytes: Uint8Array | ArrayBuffer, table: string, options?: SqliteOptions): Promise<SqliteDataset> {
    return new this(await (await reader('SqliteDataset.fromBytes')).open(bytes, table, false, options, 'SqliteDataset.fromBytes'));
  }

  /**
   * The rows of one read-only SQL statement (SELECT ...).
   * @throws as fromBytes; `Value` if the SQL does not compile, is more than one statement,
   *   or writes.
   */
  static async fromQuery(bytes: Uint8Array | ArrayBuffer, sql: string, options?: SqliteOptions): Promise<SqliteDataset> {
    return new this(await (await reader('SqliteDataset.fromQuery')).open(bytes, sql, true, options, 'SqliteDataset.fromQuery'));
  }
}

/** sqlite_read.ts, imported once on first use. */
function reader(op: string): Promise<typeof import('./sqlite_read.js')> {
  return import('./sqlite_read.js').catch((err: unknown) => {
    throw fail('Io', `${op}: cannot load the SQLite reader (${String((err as Error)?.message ?? err)})`);
  });
}
