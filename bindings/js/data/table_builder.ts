// The readers' half of kiln.data's tables (CsvDataset, SqliteDataset: csv_read.ts,
// sqlite_read.ts): options, limits and the row -> column builder, the JS twin of
// engine/src/data/table/builder.cpp. Imported with the readers on first use (tabular.ts
// holds the dataset class itself, which every page with kiln.data loads).
import { describe, fail } from '../tensor/checks.js';
import type { TabularLimits, TabularParts } from './tabular.js';

const DEFAULT_LIMITS: Required<TabularLimits> = {
  maxBytes: 2 ** 31, maxFieldBytes: 2 ** 20, maxColumns: 65536, maxRows: 100_000_000, maxClasses: 65536,
};

/** Checked options with defaults. @internal */
export interface ResolvedOptions {
  features: string[];
  label: string | null;
  labelType: 'int' | 'string';
  classes: string[];
  fillMissing: number | null;
  limits: Required<TabularLimits>;
}

/** Checks user options (names, types, unknown keys). @internal */
export function resolveOptions(options: unknown, op: string, extra: readonly string[] = []): ResolvedOptions {
  if (options === undefined) options = {};
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw fail('Type', `${op}: options must be an object, got ${describe(options)}`);
  }
  const o = options as Record<string, unknown>;
  const known = ['features', 'label', 'labelType', 'classes', 'fillMissing', 'limits', ...extra];
  for (const k of Object.keys(o)) {
    if (!known.includes(k)) throw fail('Config', `${op}: unknown option "${k}" (options: ${known.join(', ')})`);
  }
  const strings = (v: unknown, what: string): string[] => {
    if (!Array.isArray(v) || !v.every((s) => typeof s === 'string')) {
      throw fail('Type', `${op}: ${what} must be an array of strings, got ${describe(v)}`);
    }
    return [...v] as string[];
  };
  const features = o.features === undefined ? [] : strings(o.features, 'features');
  if (o.label !== undefined && typeof o.label !== 'string') throw fail('Type', `${op}: label must be a string, got ${describe(o.label)}`);
  const classes = o.classes === undefined ? [] : strings(o.classes, 'classes');
  let labelType = o.labelType ?? (o.classes !== undefined ? 'string' : 'int');
  if (labelType !== 'int' && labelType !== 'string') throw fail('Type', `${op}: labelType must be 'int' or 'string', got ${describe(labelType)}`);
  if (o.classes !== undefined && o.labelType === 'int') throw fail('Value', `${op}: classes are given but the label type is Int`);
  if (o.classes !== undefined) labelType = 'string';
  if (o.fillMissing !== undefined && typeof o.fillMissing !== 'number') throw fail('Type', `${op}: fillMissing must be a number, got ${describe(o.fillMissing)}`);
  const limits = { ...DEFAULT_LIMITS };
  if (o.limits !== undefined) {
    if (o.limits === null || typeof o.limits !== 'object') throw fail('Type', `${op}: limits must be an object, got ${describe(o.limits)}`);
    for (const [k, v] of Object.entries(o.limits as object)) {
      if (!(k in DEFAULT_LIMITS)) throw fail('Config', `${op}: unknown limit "${k}" (limits: ${Object.keys(DEFAULT_LIMITS).join(', ')})`);
      if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) throw fail('Type', `${op}: limits.${k} must be a non-negative integer, got ${describe(v)}`);
      limits[k as keyof TabularLimits] = v;
    }
  }
  return {
    features, label: (o.label as string | undefined) ?? null, labelType: labelType as 'int' | 'string', classes,
    fillMissing: o.fillMissing === undefined ? null : Math.fround(o.fillMissing as number), limits,
  };
}

/** A value as messages show it: quoted, cut to 40 characters. @internal */
export function quoteValue(v: string): string {
  return v.length <= 40 ? `"${v}"` : `"${v.slice(0, 40)}"... (${utf8Length(v)} bytes)`;
}

/** The number of bytes of `s` in UTF-8. @internal */
export function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) { n += 4; i++; } else n += 3;
  }
  return n;
}

function listNames(names: readonly string[]): string {
  const shown = names.slice(0, 10).map(quoteValue).join(', ');
  return names.length > 10 ? `${shown}, ... (${names.length} in all)` : shown;
}

export const UNUSED = -1;
export const LABEL = -2;

/** Rows -> columns (builder.cpp's TableBuilder). @internal */
export class TableBuilder {
  readonly prefix: string;
  readonly limits: Required<TabularLimits>;
  readonly labelType: 'int' | 'string';
  private readonly rowWord: string;
  private readonly options: ResolvedOptions;
  private names: string[] = [];
  private roles: number[] = [];
  private readonly classIds = new Map<string, number>();
  private readonly classes: string[] = [];
  private featureNames: string[] = [];
  private where = 0;
  private width = 0;
  private rows = 0;
  private features = new Float32Array(1024);
  private labels: Int32Array = new Int32Array(256);

  constructor(prefix: string, rowWord: string, options: ResolvedOptions) {
    this.prefix = prefix;
    this.rowWord = rowWord;
    this.options = options;
    this.limits = options.limits;
    this.labelType = options.labelType;
    if (options.labelType === 'string') {
      if (options.classes.length > options.limits.maxClasses) {
        throw fail('Limit', `${prefix}: ${options.classes.length} classes given, more than max_classes = ${options.limits.maxClasses}`);
      }
      options.classes.forEach((c, i) => {
        if (this.classIds.has(c)) throw fail('Value', `${prefix}: class ${quoteValue(c)} appears twice in classes`);
        this.classIds.set(c, i);
        this.classes.push(c);
      });
    }
  }

  get numColumns(): number { return this.names.length; }
  role(c: number): number { return this.roles[c]; }

  setColumns(names: string[]): void {
    const { prefix, options } = this;
    if (names.length > this.limits.maxColumns) {
      throw fail('Limit', `${prefix}: ${names.length} columns, more than max_columns = ${this.limits.maxColumns}`);
    }
    const index = new Map<string, number>();
    names.forEach((name, c) => {
      if (name === '') throw fail('Format', `${prefix}: column ${c + 1} has an empty name`);
      const seen = index.get(name);
      if (seen !== undefined) throw fail('Format', `${prefix}: column name ${quoteValue(name)} appears twice (columns ${seen + 1} and ${c + 1})`);
      index.set(name, c);
    });
    this.roles = names.map(() => UNUSED);
    if (options.label !== null) {
      const c = index.get(options.label);
      if (c === undefined) throw fail('Value', `${prefix}: no label column ${quoteValue(options.label)} (columns: ${listNames(names)})`);
      this.roles[c] = LABEL;
    }
    const featureNames: string[] = [];
    if (options.features.length === 0) {
      names.forEach((name, c) => {
        if (this.roles[c] === LABEL) return;
        this.roles[c] = featureNames.length;
        featureNames.push(name);
      });
    } else {
      for (const name of options.features) {
        const c = index.get(name);
        if (c === undefined) throw fail('Value', `${prefix}: no feature column ${quoteValue(name)} (columns: ${listNames(names)})`);
        if (this.roles[c] === LABEL) throw fail('Value', `${prefix}: column ${quoteValue(name)} is the label and cannot also be a feature`);
        if (this.roles[c] !== UNUSED) throw fail('Value', `${prefix}: feature ${quoteValue(name)} is chosen twice`);
        this.roles[c] = featureNames.length;
        featureNames.push(name);
      }
    }
    if (featureNames.length === 0) throw fail('Value', `${prefix}: no feature columns (columns: ${listNames(names)})`);
    this.names = names;
    this.featureNames = featureNames;
    this.width = featureNames.length;
  }

  atRow(): string { return `${this.prefix}: ${this.rowWord} ${this.where}`; }
  at(c: number): string { return `${this.atRow()}, column ${c + 1} (${quoteValue(this.names[c])})`; }

  beginRow(where: number): void {
    this.where = where;
    if (this.rows >= this.limits.maxRows) throw fail('Limit', `${this.atRow()}: more than max_rows = ${this.limits.maxRows} rows`);
    this.rows++;
    if (this.rows * this.width > this.features.length) {
      const grown = new Float32Array(Math.max(this.rows * this.width, this.features.length * 2));
      grown.set(this.features);
      this.features = grown;
    }
    if (this.rows > this.labels.length) {
      const grown = new Int32Array(this.labels.length * 2);
      grown.set(this.labels);
      this.labels = grown;
    }
  }

  feature(c: number, value: number): void {
    const f = Math.fround(value);
    if (!Number.isFinite(value) || !Number.isFinite(f)) {
      throw fail('Value', `${this.at(c)}: ${value} is outside float32's range (|x| <= 3.4028235e38)`);
    }
    this.features[(this.rows - 1) * this.width + this.roles[c]] = f;
  }

  featureMissing(c: number): void {
    if (this.options.fillMissing === null) throw fail('Value', `${this.at(c)}: missing value (set fillMissing to fill missing values)`);
    this.features[(this.rows - 1) * this.width + this.roles[c]] = this.options.fillMissing;
  }

  /** `shown`: the value as the input wrote it, for the message (default: value). */
  labelInt(c: number, value: number, shown?: string): void {
    if (value < 0 || value > 2147483647) throw fail('Value', `${this.at(c)}: class id ${shown ?? value} is outside [0, 2147483647]`);
    this.labels[this.rows - 1] = value;
  }

  labelText(c: number, value: string): void {
    const id = this.classIds.get(value);
    if (id !== undefined) {
      this.labels[this.rows - 1] = id;
      return;
    }
    if (this.options.classes.length > 0) {
      throw fail('Value', `${this.at(c)}: label ${quoteValue(value)} is not one of the ${this.options.classes.length} classes given`);
    }
    if (this.classes.length >= this.limits.maxClasses) {
      throw fail('Limit', `${this.at(c)}: label ${quoteValue(value)} would be class ${this.classes.length + 1}, more than max_classes = ${this.limits.maxClasses}`);
    }
    this.classIds.set(value, this.classes.length);
    this.labels[this.rows - 1] = this.classes.length;
    this.classes.push(value);
  }

  labelMissing(c: number, what: string): never {
    throw fail('Value', `${this.at(c)}: missing label (${what})`);
  }

  finish(): TabularParts {
    const n = this.rows;
    return {
      featureNames: this.featureNames,
      labelName: this.options.label,
      classes: this.classes,
      features: this.features.slice(0, n * this.width),
      labels: this.options.label === null ? null : this.labels.slice(0, n),
    };
  }
}
