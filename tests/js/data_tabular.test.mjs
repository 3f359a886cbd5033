// kiln.data.CsvDataset (papaparse) and kiln.data.SqliteDataset (@sqlite.org/sqlite-wasm) on
// the fixtures of tests/data/tabular/, which tests/native/data/tabular_test.cpp reads with
// C++'s CsvDataset (libcsv) and SqliteDataset (libsqlite3): the same expected items
// (small.expected.json, from Python's csv and sqlite3 modules), the same malformed inputs
// and errors (malformed.json), and the same MNIST-like rows training Linear(784, 10) to
// PyTorch's weights (mnist_like.expected.json) from the CSV and from the database alike.
import { readFileSync } from 'node:fs';
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { beforeAll, describe, expect, it } from 'vitest';
import { init } from 'kiln-dl';
import { expectKilnRejection } from './helpers.mjs';

const DIR = new URL('../data/tabular/', import.meta.url);
const bytes = (name) => new Uint8Array(readFileSync(new URL(name, DIR)));
const json = (name) => JSON.parse(readFileSync(new URL(name, DIR), 'utf8'));
const SMALL = json('small.expected.json');
const MNIST = json('mnist_like.expected.json');

let kiln;
let D;
beforeAll(async () => {
  kiln = await init();
  D = kiln.data;
});

/** The items as plain {features: number[], label} (float32 values as they are). */
const plain = (ds) => Array.from({ length: ds.length }, (_, i) => {
  const { features, label } = ds.get(i);
  return label === undefined ? { features: Array.from(features) } : { features: Array.from(features), label };
});

describe('kiln.data.CsvDataset and SqliteDataset give the fixtures\' items', () => {
  it('small.csv: Python csv\'s items and classes (BOM, CRLF, quotes, a quoted line break, a missing value filled)', async () => {
    const ds = await D.CsvDataset.fromText(bytes('small.csv'), SMALL.options);
    expect(ds).toBeInstanceOf(D.CsvDataset);
    expect(ds).toBeInstanceOf(D.TabularDataset);
    expect(plain(ds)).toEqual(SMALL.items);
    expect(ds.classes).toEqual(SMALL.classes);
    expect(ds.featureNames).toEqual(['sepal_length', 'sepal_width']);
    expect(ds.labelName).toBe('species');
    expect(ds.numFeatures).toBe(2);
    expect(ds.classId('versicolor')).toBe(1);
    expect(() => ds.classId('rose')).toThrow(/no class "rose" among 3 classes/);
  });

  it('the same text as a string, a web ReadableStream, a Node stream and an async iterable of odd chunks', async () => {
    const text = new TextDecoder().decode(bytes('small.csv'));
    expect(plain(await D.CsvDataset.fromText(text, SMALL.options))).toEqual(SMALL.items);
    const web = Readable.toWeb(createReadStream(new URL('small.csv', DIR), { highWaterMark: 7 }));
    expect(plain(await D.CsvDataset.fromStream(web, SMALL.options))).toEqual(SMALL.items);
    const node = createReadStream(new URL('small.csv', DIR), { highWaterMark: 5 });
    expect(plain(await D.CsvDataset.fromStream(node, SMALL.options))).toEqual(SMALL.items);
    async function* pieces() { for (let i = 0; i < text.length; i += 3) yield text.slice(i, i + 3); }
    expect(plain(await D.CsvDataset.fromStream(pieces(), SMALL.options))).toEqual(SMALL.items);
    await expectKilnRejection(kiln, D.CsvDataset.fromStream('a,b', SMALL.options), 'Type', /expected a ReadableStream or an async iterable/);
  });

  it('small.db table "flowers": the CSV\'s items', async () => {
    const ds = await D.SqliteDataset.fromBytes(bytes('small.db'), 'flowers', SMALL.options);
    expect(ds).toBeInstanceOf(D.SqliteDataset);
    expect(plain(ds)).toEqual(SMALL.items);
    expect(ds.classes).toEqual(SMALL.classes);
    const fromBuffer = await D.SqliteDataset.fromBytes(bytes('small.db').buffer, 'flowers', SMALL.options);
    expect(plain(fromBuffer)).toEqual(SMALL.items);
    const fromNodeBuffer = await D.SqliteDataset.fromBytes(readFileSync(new URL('small.db', DIR)), 'flowers', SMALL.options);
    expect(plain(fromNodeBuffer)).toEqual(SMALL.items);
  });

  it('a query with integer labels and NULLs filled (2^24 + 1 rounds to 2^24 as in C++)', async () => {
    const ds = await D.SqliteDataset.fromQuery(bytes('small.db'), 'SELECT x, y, label FROM numbers WHERE x > 0 ORDER BY x', { label: 'label', fillMissing: 0 });
    expect(plain(ds)).toEqual(SMALL.numbers.features.map((features, i) => ({ features, label: SMALL.numbers.labels[i] })));
    expect(ds.get(2).features[0]).toBe(16777216);
    expect(ds.classes).toEqual([]);
  });

  it('given classes fix the ids; no label and every column by default; no final line break', async () => {
    const ds = await D.CsvDataset.fromText(bytes('small.csv'), { features: ['sepal_length'], label: 'species', classes: ['virginica', 'versicolor', 'setosa'] });
    expect(plain(ds).map((i) => i.label)).toEqual([2, 2, 1, 1, 0, 2]);
    const nolabel = await D.CsvDataset.fromText('a,b\n1,2\n3,4');
    expect(plain(nolabel)).toEqual([{ features: [1, 2] }, { features: [3, 4] }]);
    expect(nolabel.labelName).toBe(null);
  });

  it('LF, CRLF and CR line ends read alike; line numbers count blank lines', async () => {
    for (const eol of ['\n', '\r\n', '\r']) {
      const text = `x,y${eol}1.5,0${eol}${eol}2,1${eol}`;
      expect(plain(await D.CsvDataset.fromText(text, { label: 'y' }))).toEqual([{ features: [1.5], label: 0 }, { features: [2], label: 1 }]);
      await expectKilnRejection(kiln, D.CsvDataset.fromText(`${text}q,1${eol}`, { label: 'y' }), 'Value', /line 5, column 1 \("x"\): expected a number/);
    }
  });

  it('numbers as C++ reads them: underflow to (signed) 0, nearest float32; no nan/inf/hex', async () => {
    const ds = await D.CsvDataset.fromText('v\n1e-400\n-1e-400\n0.1\n 7 \n3.4028235e38\n1.\n');
    const got = plain(ds).map((i) => i.features[0]);
    expect(got).toEqual([0, -0, Math.fround(0.1), 7, Math.fround(3.4028235e38), 1]);
    expect(Object.is(got[1], -0)).toBe(true);
    for (const bad of ['1e', '.', '+', '1.2.3', '1,5', 'inf', 'Infinity', '1e400', '1_000']) {
      await expectKilnRejection(kiln, D.CsvDataset.fromText(`v\n"${bad}"\n`), 'Value', /expected a number|outside float32's range/);
    }
  });

  it('a line of spaces is a record (only empty lines are skipped)', async () => {
    await expectKilnRejection(kiln, D.CsvDataset.fromText('a,y\n1,0\n  \n', { label: 'y' }), 'Value', /line 3, column 1 \("a"\): expected a number, got " {2}"/);
  });

  it('a delimiter option; bad options are refused', async () => {
    const ds = await D.CsvDataset.fromText('a;y\n2.5;1\n', { label: 'y', delimiter: ';' });
    expect(plain(ds)).toEqual([{ features: [2.5], label: 1 }]);
    await expectKilnRejection(kiln, D.CsvDataset.fromText('a;y\n"1,5";0\n', { label: 'y', delimiter: ';' }), 'Value', /line 2, column 1 \("a"\): expected a number, got "1,5"/);
    await expectKilnRejection(kiln, D.CsvDataset.fromText('a\n1\n', { lable: 'y' }), 'Config', /unknown option "lable"/);
    await expectKilnRejection(kiln, D.CsvDataset.fromText('a\n1\n', { limits: { maxRows: -1 } }), 'Type', /limits.maxRows must be a non-negative integer/);
    await expectKilnRejection(kiln, D.CsvDataset.fromText(42), 'Type', /expected a string, Uint8Array or ArrayBuffer/);
    await expectKilnRejection(kiln, D.SqliteDataset.fromBytes('x', 't'), 'Type', /expected the database's bytes/);
  });
});

describe('malformed inputs: the errors C++ gives (malformed.json)', () => {
  const cases = json('malformed.json');
  it('lists every case', () => expect(cases.length).toBeGreaterThan(40));
  for (const c of cases) {
    it(`${c.kind} ${c.name}: ${c.code}`, async () => {
      const source = `"${new URL(c.file, DIR).pathname}"`;
      const options = { ...c.options, source };
      const data = bytes(c.file);
      let promise;
      if (c.kind === 'csv') promise = D.CsvDataset.fromText(data, options);
      else if (c.query !== undefined) promise = D.SqliteDataset.fromQuery(data, c.query, options);
      else promise = D.SqliteDataset.fromBytes(data, c.table, options);
      const err = await promise.then(() => null, (e) => e);
      expect(err, 'no error').toBeInstanceOf(kiln.KilnError);
      expect(err.code, err.message).toBe(c.code);
      expect(err.message).toMatch(new RegExp(c.message));
      expect(err.message.startsWith(`${c.kind === 'csv' ? 'CsvDataset' : 'SqliteDataset'}: ${source}`)).toBe(true);
    });
  }
});

describe('MNIST-like rows: the CSV and the database train Linear(784, 10) to the same weights', () => {
  let csv;
  let db;
  beforeAll(async () => {
    csv = await D.CsvDataset.fromText(bytes('mnist_like.csv'), { label: 'label' });
    db = await D.SqliteDataset.fromBytes(bytes('mnist_like.db'), 'train', { label: 'label' });
  });

  it('the same 200 rows of 784 pixels, as the generator wrote them', () => {
    expect(csv.length).toBe(200);
    expect(csv.numFeatures).toBe(784);
    expect(csv.featureNames).toEqual(db.featureNames);
    expect(csv.featureNames[783]).toBe('pixel783');
    const counts = new Array(10).fill(0);
    let sum = 0;
    for (let i = 0; i < csv.length; i++) {
      const a = csv.get(i);
      const b = db.get(i);
      expect(b.label).toBe(a.label);
      expect(Array.from(b.features)).toEqual(Array.from(a.features));
      counts[a.label]++;
      for (const v of a.features) sum += v;
    }
    expect(counts).toEqual(MNIST.label_counts);
    expect(sum).toBe(MNIST.pixel_sum);
    const first = new Array(784).fill(0);
    for (const [i, v] of MNIST.first_row.nonzero) first[i] = v;
    expect(Array.from(csv.get(0).features)).toEqual(first);
    expect(csv.get(0).label).toBe(MNIST.first_row.label);
  });

  it('a DataLoader with worker threads gives the batches of the calling thread', async () => {
    const batcher = D.defaultBatcher({ dtype: { label: 'int32' } });
    const collect = async (numWorkers) => {
      const out = [];
      for await (const { features, label } of new D.DataLoader(db, { batchSize: 64, numWorkers, batcher })) {
        out.push([features.shape, Array.from(features.dataSync()), Array.from(label.dataSync())]);
        kiln.dispose([features, label]);
      }
      return out;
    };
    const here = await collect(0);
    expect(here.map((b) => b[0])).toEqual([[64, 784], [64, 784], [64, 784], [8, 784]]);
    expect(await collect(2)).toEqual(here);
  });

  it('a table of one feature column gives Float32Array features in workers too', async () => {
    const csv = await D.CsvDataset.fromText('x,y\n1.5,0\n-2,1\n4,0\n', { features: ['x'], label: 'y' });
    expect(csv.get(1).features).toBeInstanceOf(Float32Array);
    expect(Array.from(csv.get(1).features)).toEqual([-2]);
    const seen = [];
    const batcher = D.defaultBatcher({ dtype: { label: 'int32' } });
    for (const numWorkers of [0, 1]) {
      for await (const { features, label } of new D.DataLoader(csv, { batchSize: 3, numWorkers, batcher })) {
        seen.push([numWorkers, features.shape, Array.from(features.dataSync()), Array.from(label.dataSync())]);
        kiln.dispose([features, label]);
      }
    }
    expect(seen).toEqual([[0, [3, 1], [1.5, -2, 4], [0, 1, 0]], [1, [3, 1], [1.5, -2, 4], [0, 1, 0]]]);
  });

  /** One epoch of SGD (lr 0.1, batches of 20 in order, inputs / 255, cross entropy). */
  async function trainOneEpoch(dataset) {
    const model = kiln.nn.sequential([{ type: 'linear', dInput: 784, dOutput: 10 }]);
    const w = new Float32Array(7840);
    const b = new Float32Array(10);
    for (let o = 0; o < 10; o++) {
      for (let i = 0; i < 784; i++) w[o * 784 + i] = ((o * 784 + i) * 7919 % 1000 - 500) * 1e-5;
      b[o] = (o - 5) * 0.01;
    }
    kiln.tidy(() => model.loadStateDict({
      '0.weight': kiln.Tensor.fromData(w, { shape: [10, 784] }),
      '0.bias': kiln.Tensor.fromData(b, { shape: [10] }),
    }));
    const optimizer = kiln.optim.sgd({ lr: 0.1 });
    const loader = new D.DataLoader(dataset, { batchSize: 20, batcher: D.defaultBatcher({ dtype: { label: 'int32' } }) });
    const losses = [];
    for (const batch of loader) {
      kiln.tidy(() => {
        const logits = model.call(batch.features.div(255));
        const loss = kiln.nn.functional.crossEntropy(logits, batch.label);
        losses.push(loss.item());
        optimizer.step(model, loss.backward());
        batch.features.dispose();
        batch.label.dispose();
      });
    }
    const weights = kiln.tidy(() => {
      const sd = model.stateDict();
      return [...sd['0.weight'].dataSync(), ...sd['0.bias'].dataSync()];
    });
    model.dispose();
    return { weights, losses };
  }

  it('bit for bit the same from both, and PyTorch\'s weights to 1e-5', async () => {
    const a = await trainOneEpoch(csv);
    const b = await trainOneEpoch(db);
    expect(a.weights.length).toBe(7850);
    expect(b.weights).toEqual(a.weights);
    expect(b.losses).toEqual(a.losses);
    expect(a.losses.length).toBe(MNIST.losses.length);
    a.losses.forEach((l, i) => expect(Math.abs(l - MNIST.losses[i])).toBeLessThan(1e-5));
    const torch = [...MNIST.weight.flat(), ...MNIST.bias];
    let maxDiff = 0;
    torch.forEach((v, i) => { maxDiff = Math.max(maxDiff, Math.abs(a.weights[i] - v)); });
    expect(maxDiff).toBeLessThan(1e-5);
    let moved = 0;
    for (let o = 0; o < 10; o++) moved += Math.abs(a.weights[7840 + o] - Math.fround((o - 5) * 0.01));
    expect(moved).toBeGreaterThan(1e-2);
  });
});

describe('papaparse and sqlite-wasm are imported on first use only', () => {
  it('the built modules import them dynamically, never statically', () => {
    // csv_read.js / sqlite_read.js: the readers, themselves imported by csv.js / sqlite.js on first use.
    for (const [file, name] of [['csv_read.js', 'papaparse'], ['sqlite_read.js', '@sqlite.org/sqlite-wasm']]) {
      const text = readFileSync(new URL(`../../dist/data/${file}`, import.meta.url), 'utf8');
      expect(text).toContain(`import('${name}')`);
      expect(text).not.toMatch(new RegExp(`from\\s*['"\`]${name.replace('/', '\\/')}['"\`]`));
    }
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    expect(pkg.dependencies.papaparse).toMatch(/^\d+\.\d+\.\d+$/);
    expect(pkg.dependencies['@sqlite.org/sqlite-wasm']).toMatch(/^\d+\.\d+\.\d+(-build\d+)?$/);
  });
});

describe('review fixes', () => {
  it('a WAL-mode database opens from bytes (make_review_fixtures.py), the caller\'s bytes unchanged', async () => {
    const bytes = new Uint8Array(readFileSync(new URL('wal.db', DIR)));
    expect([bytes[18], bytes[19]]).toEqual([2, 2]);
    const db = await D.SqliteDataset.fromBytes(bytes, 't', { label: 'y' });
    expect(db.length).toBe(2);
    expect(Array.from(db.get(1).features)).toEqual([2.5]);
    expect(db.get(1).label).toBe(1);
    expect([bytes[18], bytes[19]]).toEqual([2, 2]);
  });
});
