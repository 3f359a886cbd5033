// kiln.data's tables in JS: the part of CsvDataset and SqliteDataset that does not depend on
// the file format (the JS twin of engine/src/data/table/builder.cpp, which the native
// datasets use: the same options, checks and messages, tested on the same fixtures,
// tests/data/tabular/). Engine-free: the datasets are ColumnDatasets, so a DataLoader's
// workers receive their columns. The readers' half (options, limits, the row -> column
// builder) is table_builder.ts, imported with the readers on first use.
import { fail } from '../tensor/checks.js';
import { checkIndex, ColumnDataset } from './plain.js';

/** Size limits of a table reader (C++ kiln::data::TabularLimits), checked while reading. */
export interface TabularLimits {
  /** Input size in bytes (CSV text as UTF-8, the database file). Default 2^31. */
  maxBytes?: number;
  /** Bytes of one CSV field or SQLite TEXT value. Default 2^20. */
  maxFieldBytes?: number;
  /** Columns of the header / result. Default 65536. */
  maxColumns?: number;
  /** Data rows. Default 10^8. */
  maxRows?: number;
  /** Distinct string labels. Default 65536. */
  maxClasses?: number;
}

/**
 * Which columns are read and how (C++ kiln::data::TabularOptions): numeric feature columns
 * by name and an optional label column whose values are class ids ('int') or class names
 * ('string', mapped to ids in the order of `classes`, else of first appearance).
 */
export interface TabularOptions {
  /** Feature columns in item order; default every column except the label. */
  features?: string[];
  /** The label column; default none (items have no label). */
  label?: string;
  /** 'int' (default): the value is the class id in [0, 2^31 - 1]; 'string': a class name. */
  labelType?: 'int' | 'string';
  /** Class names (implies labelType 'string'): id i = classes[i]; other labels are errors. */
  classes?: string[];
  /** Fill missing feature values (an empty CSV field, an SQL NULL) with this; default: refuse them. */
  fillMissing?: number;
  limits?: TabularLimits;
}

/** An item of a CsvDataset or SqliteDataset: features [numFeatures], label a class id. */
export interface TabularItem {
  features: Float32Array;
  label?: number;
}

/** What a reader builds. @internal */
export interface TabularParts {
  featureNames: string[];
  labelName: string | null;
  classes: string[];
  features: Float32Array;
  labels: Int32Array | null;
}

/**
 * The rows of a table in memory: a ColumnDataset of items `{features: Float32Array, label}`
 * (`features` a view of the dataset's storage: copy it before changing it), with the
 * table's names and the class mapping. The base of kiln.data.CsvDataset and SqliteDataset.
 */
export class TabularDataset extends ColumnDataset<TabularItem> {
  /** The feature columns' names, in item order. */
  readonly featureNames: readonly string[];
  /** The label column's name (null without a label). */
  readonly labelName: string | null;
  /** String labels: the class names by id (`classes[id]`); int labels: empty. */
  readonly classes: readonly string[];

  /** @internal */
  constructor(parts: TabularParts) {
    const columns: Record<string, Float32Array | Int32Array> = { features: parts.features };
    if (parts.labels) columns.label = parts.labels;
    super(columns, { itemSizes: { features: parts.featureNames.length }, views: ['features'] });
    this.featureNames = Object.freeze([...parts.featureNames]);
    this.labelName = parts.labelName;
    this.classes = Object.freeze([...parts.classes]);
  }

  /**
   * Row `index`: `{features, label}` (no `label` without a label column); `features` is a
   * Float32Array view of the dataset's storage, even for one feature.
   * @throws KilnError `Index`/`Type` for a bad index.
   */
  override get(index: number): TabularItem {
    checkIndex(index, this.length, `${this.constructor.name}.get`);
    const w = this.featureNames.length;
    const item: TabularItem = { features: (this._columns.features as Float32Array).subarray(index * w, (index + 1) * w) };
    const labels = this._columns.label as Int32Array | undefined;
    if (labels !== undefined) item.label = labels[index];
    return item;
  }

  /** Features per item. */
  get numFeatures(): number { return this.featureNames.length; }

  /**
   * The id of class `name` (string labels).
   * @throws KilnError `Value` if it is not a class of this dataset.
   */
  classId(name: string): number {
    const id = this.classes.indexOf(name);
    if (id < 0) throw fail('Value', `TabularDataset.classId: no class ${JSON.stringify(name)} among ${this.classes.length} classes`);
    return id;
  }
}
