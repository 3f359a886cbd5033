// SqliteDataset's reading (sqlite.ts), imported on first use: a user's SQLite database
// (bytes) opened read-only in the official SQLite WebAssembly build (@sqlite.org/sqlite-wasm,
// itself imported on first use: it is ~1 MB of wasm), read into the same items as C++'s
// kiln::data::SqliteDataset (libsqlite3) with the same rules and messages
// (kiln/data/sqlite.hpp, engine/src/data/table/sqlite.cpp).
import { describe, fail } from '../tensor/checks.js';
import type { SqliteOptions } from './sqlite.js';
import { LABEL, quoteValue, resolveOptions, TableBuilder, UNUSED } from './table_builder.js';
import type { TabularParts } from './tabular.js';

// The part of sqlite-wasm's C API used here (its index.d.ts types the whole API).
type Ptr = number;
interface Capi {
  sqlite3_deserialize(db: Ptr, schema: string, data: Ptr, size: number, bufSize: number, flags: number): number;
  sqlite3_prepare_v2(db: Ptr, sql: Ptr, n: number, ppStmt: Ptr, pzTail: Ptr): number;
  sqlite3_step(stmt: Ptr): number;
  sqlite3_finalize(stmt: Ptr): number;
  sqlite3_column_count(stmt: Ptr): number;
  sqlite3_column_name(stmt: Ptr, i: number): string;
  sqlite3_column_type(stmt: Ptr, i: number): number;
  sqlite3_column_int64(stmt: Ptr, i: number): bigint | number;
  sqlite3_column_double(stmt: Ptr, i: number): number;
  sqlite3_column_text(stmt: Ptr, i: number): string | null;
  sqlite3_column_bytes(stmt: Ptr, i: number): number;
  sqlite3_stmt_readonly(stmt: Ptr): number;
  sqlite3_errmsg(db: Ptr): string;
  sqlite3_errstr(rc: number): string;
  sqlite3_limit(db: Ptr, id: number, value: number): number;
  sqlite3_exec(db: Ptr, sql: string, cb: number, arg: number, err: number): number;
  SQLITE_LIMIT_LENGTH: number;
  SQLITE_DESERIALIZE_FREEONCLOSE: number;
  SQLITE_DESERIALIZE_READONLY: number;
}
interface Wasm {
  allocFromTypedArray(a: Uint8Array): Ptr;
  allocCString(s: string, withLength: true): [Ptr, number];
  alloc(n: number): Ptr;
  dealloc(p: Ptr): void;
  peekPtr(p: Ptr): Ptr;
}
interface Sqlite3 {
  capi: Capi;
  wasm: Wasm;
  oo1: { DB: new (name: string, flags: string) => { pointer: Ptr; close(): void } };
}

let sqlite: Promise<Sqlite3> | null = null;
/** sqlite-wasm, imported and instantiated once on first use (never at init). */
function loadSqlite(): Promise<Sqlite3> {
  sqlite ??= (async () => {
    const mod = (await import('@sqlite.org/sqlite-wasm')) as unknown as { default: (o: object) => Promise<unknown> };
    // print/printErr: sqlite-wasm logs its set-up (OPFS availability...) otherwise.
    return (await mod.default({ print: () => {}, printErr: () => {} })) as Sqlite3;
  })().catch((err: unknown) => {
    sqlite = null;
    throw fail('Value', `SqliteDataset: cannot load @sqlite.org/sqlite-wasm (${String((err as Error)?.message ?? err)})`);
  });
  return sqlite;
}

const SQLITE_ROW = 100;
const SQLITE_DONE = 101;
const INTEGER = 1, FLOAT = 2, TEXT = 3, BLOB = 4, NULL = 5;

function hex(b: number): string {
  return b.toString(16).toUpperCase().padStart(2, '0');
}

function checkHeader(bytes: Uint8Array, prefix: string): void {
  const magic = 'SQLite format 3\0';
  let ok = bytes.length >= 100;
  for (let i = 0; ok && i < 16; i++) ok = bytes[i] === magic.charCodeAt(i);
  if (ok) return;
  let what: string;
  if (bytes.length === 0) what = 'the file is empty';
  else if (bytes.length < 100) what = `the file has ${bytes.length} bytes, shorter than SQLite's 100-byte header`;
  else what = `it starts with ${Array.from(bytes.subarray(0, 8), hex).join(' ')}, not "SQLite format 3\\0"`;
  throw fail('Format', `${prefix}: not an SQLite database: ${what}`);
}

/** The KilnError for SQLite result code rc (sqlite.cpp's fail). */
function sqliteError(capi: Capi, db: Ptr, rc: number, prefix: string, doing: string): Error {
  const text = `${prefix}: ${doing}: ${db ? capi.sqlite3_errmsg(db) : capi.sqlite3_errstr(rc)}`;
  switch (rc & 0xff) {
    case 26: case 11: case 24: case 25: // NOTADB, CORRUPT, FORMAT, RANGE
      return fail('Format', `${text} (not a database, or a corrupt one)`);
    case 18: return fail('Limit', `${text} (a value is longer than max_field_bytes)`); // TOOBIG
    case 7: return fail('OutOfMemory', text); // NOMEM
    case 14: case 10: case 3: case 5: case 6: return fail('Io', text); // CANTOPEN IOERR PERM BUSY LOCKED
    default: return fail('Value', text);
  }
}

function describeValue(capi: Capi, stmt: Ptr, c: number): string {
  switch (capi.sqlite3_column_type(stmt, c)) {
    case INTEGER: return `INTEGER ${String(capi.sqlite3_column_int64(stmt, c))}`;
    case FLOAT: return `REAL ${capi.sqlite3_column_double(stmt, c)}`;
    case TEXT: return `TEXT ${quoteValue(capi.sqlite3_column_text(stmt, c) ?? '')}`;
    case BLOB: return `BLOB of ${capi.sqlite3_column_bytes(stmt, c)} bytes`;
    default: return 'NULL';
  }
}

/** Prepares one statement; returns it and the SQL text after it (the tail). */
function prepare(s3: Sqlite3, db: Ptr, sql: string, prefix: string, doing: string): { stmt: Ptr; tail: string; rc: number } {
  const { capi, wasm } = s3;
  const [pSql, n] = wasm.allocCString(sql, true);
  const pp = wasm.alloc(16);
  try {
    const rc = capi.sqlite3_prepare_v2(db, pSql, n, pp, pp + 8);
    if (rc !== 0) return { stmt: 0, tail: '', rc };
    const stmt = wasm.peekPtr(pp);
    const tailAt = wasm.peekPtr(pp + 8) - pSql;
    // The tail in bytes -> text (the SQL is UTF-8 in wasm memory).
    const tail = new TextDecoder().decode(new TextEncoder().encode(sql).subarray(tailAt));
    return { stmt, tail, rc: 0 };
  } catch (err) {
    throw fail('Value', `${prefix}: ${doing}: ${String((err as Error)?.message ?? err)}`);
  } finally {
    wasm.dealloc(pp);
    wasm.dealloc(pSql);
  }
}

function readRows(s3: Sqlite3, db: Ptr, stmt: Ptr, opts: ReturnType<typeof resolveOptions>, prefix: string): TabularParts {
  const { capi } = s3;
  const builder = new TableBuilder(prefix, 'row', opts);
  const ncols = capi.sqlite3_column_count(stmt);
  if (ncols > opts.limits.maxColumns) throw fail('Limit', `${prefix}: ${ncols} columns, more than max_columns = ${opts.limits.maxColumns}`);
  const names: string[] = [];
  for (let c = 0; c < ncols; c++) names.push(capi.sqlite3_column_name(stmt, c));
  builder.setColumns(names);
  for (let row = 0; ;) {
    const rc = capi.sqlite3_step(stmt);
    if (rc === SQLITE_DONE) break;
    if (rc !== SQLITE_ROW) throw sqliteError(capi, db, rc, prefix, `reading row ${row + 1}`);
    builder.beginRow(++row);
    for (let c = 0; c < ncols; c++) {
      const role = builder.role(c);
      if (role === UNUSED) continue;
      const type = capi.sqlite3_column_type(stmt, c);
      if (role === LABEL) {
        if (type === NULL) builder.labelMissing(c, 'NULL');
        if (builder.labelType === 'int' && type === INTEGER) {
          const v = capi.sqlite3_column_int64(stmt, c);
          builder.labelInt(c, Number(v), String(v)); // a BigInt beyond 2^53 is out of range either way
        } else if (builder.labelType === 'string' && type === TEXT) {
          builder.labelText(c, capi.sqlite3_column_text(stmt, c) ?? '');
        } else {
          throw fail('Value', `${builder.at(c)}: expected ${builder.labelType === 'int' ? 'an INTEGER class id' : 'a TEXT class name'}, got ${describeValue(capi, stmt, c)}`);
        }
        continue;
      }
      if (type === INTEGER) {
        const v = capi.sqlite3_column_int64(stmt, c);
        builder.feature(c, Number(v)); // int64 -> nearest double, as C++'s static_cast<double>
      } else if (type === FLOAT) {
        builder.feature(c, capi.sqlite3_column_double(stmt, c));
      } else if (type === NULL) {
        builder.featureMissing(c);
      } else {
        throw fail('Value', `${builder.at(c)}: expected an INTEGER or REAL feature, got ${describeValue(capi, stmt, c)}`);
      }
    }
  }
  return builder.finish();
}

function listTables(s3: Sqlite3, db: Ptr): string {
  const { capi } = s3;
  const { stmt, rc } = prepare(s3, db, "SELECT name FROM sqlite_schema WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%' ORDER BY name", '', '');
  if (rc !== 0) return '?';
  const names: string[] = [];
  try {
    while (capi.sqlite3_step(stmt) === SQLITE_ROW) names.push(capi.sqlite3_column_text(stmt, 0) ?? '');
  } finally {
    capi.sqlite3_finalize(stmt);
  }
  if (names.length === 0) return 'none';
  const shown = names.slice(0, 10).map(quoteValue).join(', ');
  return names.length > 10 ? `${shown}, ... (${names.length} in all)` : shown;
}

/** SqliteDataset.fromBytes / fromQuery's reading: the parts of the dataset. */
export async function open(bytes: unknown, tableOrSql: unknown, isQuery: boolean, options: SqliteOptions | undefined, op: string): Promise<TabularParts> {
  const opts = resolveOptions(options, op, ['source']);
  if (options?.source !== undefined && typeof options.source !== 'string') throw fail('Type', `${op}: source must be a string, got ${describe(options.source)}`);
  const prefix = `SqliteDataset: ${options?.source ?? 'bytes'}`;
  let data: Uint8Array;
  // A plain Uint8Array view: sqlite-wasm's allocFromTypedArray refuses subclasses (Node's Buffer).
  if (bytes instanceof Uint8Array) data = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  else if (bytes instanceof ArrayBuffer) data = new Uint8Array(bytes);
  else throw fail('Type', `${op}: expected the database's bytes (a Uint8Array or ArrayBuffer), got ${describe(bytes)}`);
  if (typeof tableOrSql !== 'string') throw fail('Type', `${op}: ${isQuery ? 'sql' : 'table'} must be a string, got ${describe(tableOrSql)}`);
  if (data.length > opts.limits.maxBytes) throw fail('Limit', `${prefix}: ${data.length} bytes, more than max_bytes = ${opts.limits.maxBytes}`);
  checkHeader(data, prefix);
  const s3 = await loadSqlite();
  const { capi, wasm } = s3;
  const handle = new s3.oo1.DB(':memory:', 'c');
  const db = handle.pointer;
  let stmt = 0;
  try {
    // SQLite owns (and frees) its copy; read-only: nothing is written to it.
    // A WAL-mode file (header bytes 18 and 19 = 2) cannot be opened from memory: SQLite's
    // copy is marked as a rollback-journal file, as the native SqliteDataset does (the
    // caller's bytes are not changed).
    const wal = data.length > 19 && data[18] === 2 && data[19] === 2;
    const p = wasm.allocFromTypedArray(wal ? Uint8Array.from(data, (v, i) => (i === 18 || i === 19 ? 1 : v)) : data);
    let rc = capi.sqlite3_deserialize(db, 'main', p, data.length, data.length,
      capi.SQLITE_DESERIALIZE_FREEONCLOSE | capi.SQLITE_DESERIALIZE_READONLY);
    if (rc !== 0) throw sqliteError(capi, db, rc, prefix, 'opening');
    const cap = Math.max(1, Math.min(0x7fffffff, opts.limits.maxFieldBytes));
    capi.sqlite3_limit(db, capi.SQLITE_LIMIT_LENGTH, cap);
    rc = capi.sqlite3_exec(db, 'PRAGMA query_only = 1; PRAGMA cell_size_check = 1; PRAGMA trusted_schema = 0;', 0, 0, 0);
    if (rc !== 0) throw sqliteError(capi, db, rc, prefix, 'opening');
    if (isQuery) {
      const sql = tableOrSql;
      const r = prepare(s3, db, sql, prefix, 'preparing the query');
      if (r.rc !== 0) {
        if ((r.rc & 0xff) === 1) throw fail('Value', `${prefix}: the query does not compile: ${capi.sqlite3_errmsg(db)}`);
        throw sqliteError(capi, db, r.rc, prefix, 'preparing the query');
      }
      stmt = r.stmt;
      if (!stmt) throw fail('Value', `${prefix}: the query is empty`);
      const rest = r.tail.search(/[^ \t\n\r;]/);
      if (rest >= 0) throw fail('Value', `${prefix}: the query holds more than one statement (from ${quoteValue(r.tail.slice(rest))}); pass one SELECT`);
      if (!capi.sqlite3_stmt_readonly(stmt)) throw fail('Value', `${prefix}: the query writes to the database; pass a SELECT`);
      return readRows(s3, db, stmt, opts, prefix);
    }
    const table = tableOrSql;
    // The name as an SQL literal: sqlite3_bind_text of sqlite-wasm 3.50.4 throws on a string
    // argument (a ReferenceError in its wrapper).
    const literal = `'${table.replace(/'/g, "''")}'`;
    const check = prepare(s3, db, `SELECT 1 FROM sqlite_schema WHERE type IN ('table', 'view') AND name = ${literal}`, prefix, 'reading the schema');
    if (check.rc !== 0) throw sqliteError(capi, db, check.rc, prefix, 'reading the schema');
    try {
      rc = capi.sqlite3_step(check.stmt);
      if (rc === SQLITE_DONE) throw fail('Value', `${prefix}: no table ${quoteValue(table)} (tables: ${listTables(s3, db)})`);
      if (rc !== SQLITE_ROW) throw sqliteError(capi, db, rc, prefix, 'reading the schema');
    } finally {
      capi.sqlite3_finalize(check.stmt);
    }
    const name = `"${table.replace(/"/g, '""')}"`;
    let r = prepare(s3, db, `SELECT * FROM ${name} ORDER BY rowid`, prefix, `reading table ${quoteValue(table)}`);
    if (r.rc !== 0) {
      r = prepare(s3, db, `SELECT * FROM ${name}`, prefix, `reading table ${quoteValue(table)}`);
      if (r.rc !== 0) throw sqliteError(capi, db, r.rc, prefix, `reading table ${quoteValue(table)}`);
    }
    stmt = r.stmt;
    return readRows(s3, db, stmt, opts, prefix);
  } finally {
    if (stmt) capi.sqlite3_finalize(stmt);
    handle.close();
  }
}
