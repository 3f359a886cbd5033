// Internal: fit() of kiln.Learner's general path (learner.ts imports this module on the first
// such fit(), so a page that trains on the built-in loss path never fetches it; the bundled
// browser entry ships it as a chunk of its own): the epoch loop over any (async) iterable of
// batches, validation, metrics, the lr scheduler's and early stopping's epoch steps,
// checkpoints with resume, the Node progress bar and the callbacks. The setup and the step
// itself (generalSetup, generalStep) stay in learner_loop.ts: the constructor and
// trainOnBatch are synchronous.
import { gatherParams, type Module } from '../module_class.js';
import { camelErrors, type Model } from '../nn.js';
import { describe, fail } from '../tensor/checks.js';
import type { RawStepper } from '../raw.js';
import type { Engine, Scoped } from '../tensor/engine.js';
import type { Tensor } from '../tensor/tensor.js';
import { paramList } from './accumulator.js';
import { int, nextTurn, now, options, type Options } from './common.js';
import { isNode } from './learner_support.js';
import {
  checkModel, checkStepOutput, generalStep, scoped,
  type FitCallbacks, type GeneralEpochLog, type GeneralHistory, type GeneralSetup, type StepOutput,
} from './learner_loop.js';
import type { Metric } from './metrics.js';

/** Disposes the tensors of a batch (a tensor, or one level of an array / plain object). */
function disposeBatch(e: Engine, b: unknown): void {
  const values = b instanceof e.Tensor ? [b] : Array.isArray(b) ? b : b !== null && typeof b === 'object' && Object.getPrototypeOf(b) === Object.prototype ? Object.values(b) : [];
  for (const v of values) if (v instanceof e.Tensor && !v.isDisposed) v.dispose();
}

function isIterable(x: unknown): x is AsyncIterable<unknown> | Iterable<unknown> {
  return x !== null && typeof x === 'object' && (Symbol.asyncIterator in (x as object) || Symbol.iterator in (x as object));
}

interface LoaderLike {
  state?: () => unknown;
  loadState?: (s: unknown) => void;
  length?: number;
}

function hasState(x: unknown): x is Required<Pick<LoaderLike, 'state' | 'loadState'>> {
  return x !== null && x !== undefined && typeof (x as LoaderLike).state === 'function' && typeof (x as LoaderLike).loadState === 'function';
}

// ---------------------------------------------------------------- checkpoints

const FORMAT = 'kiln learner checkpoint';

function paramShapes(e: Engine, model: Model | Module, op: string): [string, number[]][] {
  return scoped(e, () => paramList(e, model, op).map(([name, t]) => [name, t.shape] as [string, number[]]));
}

function encodeNumber(v: number): number | string {
  return Number.isFinite(v) ? v : String(v);
}
function decodeNumber(v: unknown): number {
  return typeof v === 'string' ? Number(v) : (v as number);
}

interface CheckpointState {
  format: string;
  epoch: number;
  optimizer: string;
  params: [string, number[]][];
  history: GeneralEpochLog[];
  plateau: Options | null;
  loader: unknown;
  validLoader: unknown;
  earlyStopping: Options | null;
  seed: number;
}

/**
 * The model's SafeTensors bytes: saveSafetensors, or on the webgpu backend (whose reads are
 * asynchronous) saveSafetensorsAsync, which gives the same bytes.
 */
async function modelBytesOf(s: GeneralSetup, e: Engine): Promise<Uint8Array> {
  const asyncSave = (s.model as { saveSafetensorsAsync?: () => Promise<Uint8Array> }).saveSafetensorsAsync;
  return e.asyncRead !== null && typeof asyncSave === 'function' ? asyncSave.call(s.model) : s.model.saveSafetensors();
}

/** The optimizer's state bytes for the model (saveState; saveStateAsync on webgpu). */
async function optimizerBytesOf(s: GeneralSetup, e: Engine): Promise<Uint8Array> {
  return e.asyncRead !== null ? s.optimizer.saveStateAsync(s.model) : s.optimizer.saveState(s.model);
}

async function saveCheckpoint(s: GeneralSetup, e: Engine, epoch: number, history: GeneralEpochLog[], train: unknown, valid: unknown, op: string): Promise<void> {
  const cp = s.checkpointer!;
  const dir = `epoch-${epoch}`;
  const state: CheckpointState = {
    format: FORMAT, epoch, optimizer: s.optimizer.kind, params: paramShapes(e, s.model, op),
    history: history.map((h) => JSON.parse(JSON.stringify(h, (_k, v) => (typeof v === 'number' ? encodeNumber(v) : v)))),
    plateau: s.plateau ? Object.fromEntries(Object.entries(s.plateau.state()).map(([k, v]) => [k, encodeNumber(v)])) : null,
    loader: hasState(train) ? train.state() : null,
    validLoader: hasState(valid) ? valid.state() : null,
    earlyStopping: s.earlyStopping ? s.earlyStopping.state() : null,
    seed: s.seed,
  };
  await cp.store.save(`${dir}/model.safetensors`, await modelBytesOf(s, e));
  await cp.store.save(`${dir}/optimizer.safetensors`, await optimizerBytesOf(s, e));
  await cp.store.save(`${dir}/learner.json`, JSON.stringify(state));
  await cp.store.save('latest.json', JSON.stringify({ format: FORMAT, epoch }));
}

/** JSON.parse of a checkpoint file; `Format` naming the file (the SyntaxError as cause). */
function parseJson(text: string, file: string, op: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    const e = fail('Format', `${op}: resume: the checkpoint file ${file} is not valid JSON (${(err as Error).message}); nothing was loaded`);
    (e as { cause?: unknown }).cause = err;
    throw e;
  }
}

function asBytes(v: unknown, what: string, op: string): Uint8Array {
  if (!(v instanceof Uint8Array)) throw fail('Format', `${op}: checkpoint file ${what} is missing or not bytes`);
  return v;
}

// ---------------------------------------------------------------- the webgpu engine

/**
 * generalStep on the webgpu engine, whose reads are asynchronous: the user's trainStep, then
 * the engine's guarded step with its checks on the device (RawStepper.stepListDeferred ->
 * kiln::train::deferred_step_with_grads: the same checks, clipping and optimizer step as
 * stepList, no read), then one read of the guard's status with the loss (a refused step
 * rejects `NonFinite` and changes nothing, as stepList) and, with metrics, one read each of
 * the output and the targets, which the metrics get as host views (hostView: their own
 * synchronous reads work; a tensor a metric computes from them is read with await as any
 * other on webgpu, and is disposed after the update): 1 to 3
 * readbacks per step, where the built-in loss path reads once per `batchesPerCall` steps.
 * With gradientAccumulation: the sums on the device, one read of the loss per batch (checked
 * as accumulateList does), and applyPendingAsync every `accumulation` batches.
 * Every tensor the step makes is disposed; the batch is not.
 * @returns the step's loss value and item count.
 */
async function generalStepAsync(e: Engine, s: GeneralSetup, b: unknown, epoch: number, batch: number, op: string): Promise<{ loss: number; n: number }> {
  const made = new Set<Scoped>();
  e.scopes.push(made);
  let open = true;
  const close = () => { if (open) { e.scopes.pop(); open = false; } };
  try {
    const r = checkStepOutput(s.trainStep(s.model, b), e, op, 'trainStep');
    const lossRaw = r.loss._raw(op, 'loss');
    const stepper = s.stepper as Required<RawStepper>;
    let value: number;
    if (s.accumulation === 1) {
      const { list, refresh } = gatherParams(e, s.model, op);
      try {
        camelErrors(() => stepper.stepListDeferred(s.optimizer._raw(op), list, lossRaw, epoch, batch));
        refresh();
      } finally {
        list.release();
        list.delete();
      }
      const status = e.wrap(camelErrors(() => stepper.statusAndLoss()));
      close();  // the reads await: what other code makes meanwhile is not this step's
      value = (await readAndSettle(s, status, op))[4];
    } else {
      // Gradient accumulation: the sums on the device, the loss read and checked (as
      // accumulateList checks it), and every `accumulation` batches the guarded step.
      const { list } = gatherParams(e, s.model, op);
      try {
        camelErrors(() => stepper.accumulateListDeferred(list, lossRaw));
      } finally {
        list.release();
        list.delete();
      }
      close();
      value = Number((await r.loss.data())[0]);
      camelErrors(() => stepper.checkLoss(value, epoch, batch));
      if (batch % s.accumulation === 0) await applyPendingAsync(e, s, epoch, batch, op);
    }
    const n = r.output ? (r.output.shape[0] ?? 1) : 1;
    await updateMetrics(e, s, r, { loss: value, lr: s.optimizer.learningRate, batchSize: n }, made);
    return { loss: value, n };
  } finally {
    close();
    for (const obj of [...made]) obj.dispose();
  }
}

/**
 * The guarded step of the accumulated gradients on the webgpu engine (applyList's): the step
 * with its checks on the device, one read of the guard's status, settle (a refused step
 * rejects `NonFinite`, nothing changed).
 */
async function applyPendingAsync(e: Engine, s: GeneralSetup, epoch: number, batch: number, op: string): Promise<void> {
  const stepper = s.stepper as Required<RawStepper>;
  const { list, refresh } = gatherParams(e, s.model, op);
  try {
    camelErrors(() => stepper.applyListDeferred(s.optimizer._raw(op), list, epoch, batch));
    refresh();
  } finally {
    list.release();
    list.delete();
  }
  const status = e.wrap(camelErrors(() => stepper.statusAndLoss()));
  try {
    await readAndSettle(s, status, op);
  } finally {
    status.dispose();
  }
}

/**
 * Reads a deferred step's statusAndLoss and settles it (a refused step: `NonFinite`, the
 * optimizer put back). When the read fails, the step is still recorded: a device check
 * (`Index`: the step was refused on the device) or an out-of-memory error is reported once, so
 * the status is read again and settled before the first error is rethrown; when that read
 * fails too (a lost device), the step is dropped (clear).
 */
async function readAndSettle(s: GeneralSetup, status: Tensor, op: string): Promise<Float32Array> {
  const stepper = s.stepper as Required<RawStepper>;
  let values: Float32Array;
  try {
    values = (await status.data()) as Float32Array;
  } catch (err) {
    try {
      const again = (await status.data()) as Float32Array;
      try { stepper.settle(s.optimizer._raw(op), again); } catch { /* err names the cause */ }
    } catch {
      stepper.clear();
    }
    throw err;
  }
  camelErrors(() => stepper.settle(s.optimizer._raw(op), values));
  return values;
}

/**
 * One validation batch on the webgpu engine: validStep, one read of its loss, then the
 * metrics with host views of the output and targets (see generalStepAsync).
 */
async function validStepAsync(e: Engine, s: GeneralSetup, b: unknown, op: string): Promise<void> {
  const made = new Set<Scoped>();
  e.scopes.push(made);
  let open = true;
  const close = () => { if (open) { e.scopes.pop(); open = false; } };
  try {
    const r = checkStepOutput(s.validStep(s.model, b), e, op, 'validStep');
    close();
    r.loss._raw(op, 'loss');
    if (r.loss.size !== 1) throw fail('Shape', `${op}: validStep's loss must have one element, got shape [${r.loss.shape.join(', ')}]`);
    const value = Number((await r.loss.data())[0]);
    const n = r.output ? (r.output.shape[0] ?? 1) : 1;
    await updateMetrics(e, s, r, { loss: value, lr: s.optimizer.learningRate, batchSize: n }, made);
  } finally {
    close();
    for (const obj of [...made]) obj.dispose();
  }
}

/** The metrics' update of one step on the webgpu engine, with host views of output and targets. */
async function updateMetrics(e: Engine, s: GeneralSetup, r: StepOutput, info: { loss: number; lr: number; batchSize: number }, made: Set<Scoped>): Promise<void> {
  if (s.metrics.length === 0) return;
  const output = r.output ? await hostView(e, r.output, made) : undefined;
  const targets = r.targets instanceof e.Tensor ? await hostView(e, r.targets as Tensor, made) : r.targets;
  // The updates run synchronously in a scope of their own: what a metric computes is disposed.
  e.scopes.push(made);
  try {
    for (const m of s.metrics) m.update(output as Tensor, targets as Tensor, info);
  } finally {
    e.scopes.pop();
  }
}

/**
 * A tensor of `t`'s values read from the GPU (await data()), made with fromData so its values
 * are on the host, and marked so that its synchronous reads (dataSync, item, toArray) work:
 * what the metric protocol's update() reads. Added to `made` (disposed with the step).
 */
async function hostView(e: Engine, t: Tensor, made: Set<Scoped>): Promise<Tensor> {
  const T = e.Tensor as unknown as { fromData(d: unknown, o: { shape: readonly number[]; dtype: string }): Tensor };
  const values = await t.data();
  const view = T.fromData(values, { shape: t.shape, dtype: t.dtype });
  made.add(view as unknown as Scoped);
  (view as unknown as { _hostView: boolean })._hostView = true;
  return view;
}

// ---------------------------------------------------------------- fit

/**
 * Loads the checkpoint of `epoch` (or the latest) into the model, optimizer, scheduler,
 * loaders and early stopping. Everything is checked first; a failure after the model was
 * loaded puts the model's previous weights back, so nothing is half-applied.
 */
async function loadCheckpoint(s: GeneralSetup, e: Engine, which: number | true, train: unknown, valid: unknown, op: string): Promise<{ epoch: number; history: GeneralEpochLog[] }> {
  const store = s.checkpointer!.store;
  let epoch: number;
  if (which === true) {
    const latest = await store.load('latest.json');
    if (typeof latest !== 'string') throw fail('State', `${op}: resume: the checkpointer has no checkpoint (no latest.json)`);
    const l = parseJson(latest, 'latest.json', op) as { epoch?: unknown } | null;
    const n = l !== null && typeof l === 'object' ? l.epoch : undefined;
    if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1) {
      throw fail('Format', `${op}: resume: latest.json does not name a checkpoint (expected {"epoch": <integer >= 1>}, got ${JSON.stringify(latest.slice(0, 80))}); nothing was loaded`);
    }
    epoch = n;
  } else {
    epoch = which;
  }
  const text = await store.load(`epoch-${epoch}/learner.json`);
  if (typeof text !== 'string') throw fail('State', `${op}: resume: no complete checkpoint of epoch ${epoch}`);
  const st = parseJson(text, `epoch-${epoch}/learner.json`, op) as CheckpointState;
  if (st === null || typeof st !== 'object' || st.format !== FORMAT) throw fail('Format', `${op}: resume: epoch-${epoch}/learner.json is not a Kiln learner checkpoint`);
  // The model: the same parameter names and shapes.
  const mine = new Map(paramShapes(e, s.model, op).map(([n, sh]) => [n, sh.join(',')]));
  const theirs = new Map(st.params.map(([n, sh]) => [n, sh.join(',')]));
  const problems: string[] = [];
  for (const [n, sh] of theirs) {
    if (!mine.has(n)) problems.push(`unexpected "${n}" [${sh}]`);
    else if (mine.get(n) !== sh) problems.push(`"${n}" is [${sh}] in the checkpoint, [${mine.get(n)}] in the model`);
  }
  for (const [n, sh] of mine) if (!theirs.has(n)) problems.push(`missing "${n}" [${sh}]`);
  if (problems.length > 0) {
    throw fail('Format', `${op}: resume: the checkpoint of epoch ${epoch} is of another model (${problems.length} mismatched keys: ${problems.join('; ')}); nothing was loaded`);
  }
  if (st.optimizer !== s.optimizer.kind) {
    throw fail('Format', `${op}: resume: the checkpoint's optimizer is ${st.optimizer}, the learner's ${s.optimizer.kind}; nothing was loaded`);
  }
  if ((st.plateau === null) !== (s.plateau === null)) {
    throw fail('Format', `${op}: resume: the checkpoint ${st.plateau ? 'has' : 'has no'} ReduceLROnPlateau state, the learner ${s.plateau ? 'has' : 'has no'} such scheduler; nothing was loaded`);
  }
  if (st.loader !== null && !hasState(train)) {
    throw fail('Format', `${op}: resume: the checkpoint has a data-loader position but the training data has no loadState(); nothing was loaded`);
  }
  const modelBytes = asBytes(await store.load(`epoch-${epoch}/model.safetensors`), `epoch-${epoch}/model.safetensors`, op);
  const optimBytes = asBytes(await store.load(`epoch-${epoch}/optimizer.safetensors`), `epoch-${epoch}/optimizer.safetensors`, op);
  const before = await modelBytesOf(s, e);
  const optimBefore = await optimizerBytesOf(s, e);
  const plateauBefore = s.plateau ? s.plateau.state() : null;
  try {
    s.model.loadSafetensors(modelBytes);
    s.optimizer.loadState(s.model, optimBytes);
    if (s.plateau && st.plateau) {
      const p = Object.fromEntries(Object.entries(st.plateau).map(([k, v]) => [k, decodeNumber(v)]));
      s.plateau.loadState(p as never);
    }
    if (st.loader !== null && hasState(train)) train.loadState(st.loader);
    if (st.validLoader !== null && hasState(valid)) valid.loadState(st.validLoader);
  } catch (err) {
    s.model.loadSafetensors(before);
    s.optimizer.loadState(s.model, optimBefore);
    if (s.plateau && plateauBefore) s.plateau.loadState(plateauBefore);
    throw err;
  }
  if (s.earlyStopping && st.earlyStopping) s.earlyStopping.loadState(st.earlyStopping);
  const history = st.history.map((h) => JSON.parse(JSON.stringify(h), (_k, v) => (v === 'NaN' || v === 'Infinity' || v === '-Infinity' ? Number(v) : v)) as GeneralEpochLog);
  return { epoch, history };
}


const FIT_OPTIONS = ['epochs', 'validLoader', 'signal', 'callbacks', 'resume', 'progress', 'onBatchEnd', 'onEpochEnd'];

function metricValues(metrics: Metric[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of metrics) out[m.name] = m.value();
  return out;
}

export async function generalFit(e: Engine, s: GeneralSetup, train: unknown, config: unknown): Promise<GeneralHistory> {
  const op = 'Learner.fit';
  if (!isIterable(train)) {
    throw fail('Type', `${op}: with trainStep, metrics or the other general options, the training data must be an iterable (or async iterable) of batches, e.g. a kiln.data.DataLoader, got ${describe(train)}`);
  }
  const c = options(config, op, FIT_OPTIONS);
  const epochs = int(c.epochs, op, 'epochs', 1, 0);
  const valid = c.validLoader;
  if (valid !== undefined && !isIterable(valid)) throw fail('Type', `${op}: validLoader must be an iterable of batches, got ${describe(valid)}`);
  const cb: FitCallbacks = { ...(c.callbacks === undefined ? {} : options(c.callbacks, `${op}: callbacks`, ['onEpochBegin', 'onBatchEnd', 'onEpochEnd', 'onTrainEnd'])) };
  if (c.onBatchEnd !== undefined) cb.onBatchEnd = c.onBatchEnd;
  if (c.onEpochEnd !== undefined) cb.onEpochEnd = c.onEpochEnd;
  for (const [k, f] of Object.entries(cb)) if (f !== undefined && typeof f !== 'function') throw fail('Type', `${op}: ${k} must be a function, got ${describe(f)}`);
  const signal = c.signal;
  if (signal !== undefined && (signal === null || typeof signal.aborted !== 'boolean')) throw fail('Type', `${op}: signal must be an AbortSignal, got ${describe(signal)}`);
  const checkAbort = () => {
    if (signal && signal.aborted) throw signal.reason ?? fail('State', `${op}: aborted`);
  };
  if (c.resume !== undefined && c.resume !== false) {
    if (s.checkpointer === null) throw fail('Config', `${op}: resume needs the Learner's checkpointer option`);
    if (c.resume !== true) int(c.resume, op, 'resume', 0, 1);
  }
  const monitorDefault = valid !== undefined ? 'valid.loss' : 'train.loss';
  if (s.earlyStopping && s.earlyStopping.monitor === '') s.earlyStopping.monitor = monitorDefault;
  const monitor = s.monitor || monitorDefault;
  if (s.earlyStopping && s.earlyStopping.mode === null) {
    const name = s.earlyStopping.monitor.split('.')[1];
    const m = s.metrics.find((x) => x.name === name);
    if (m === undefined) throw fail('Config', `${op}: earlyStopping.monitor "${s.earlyStopping.monitor}" names no metric (metrics: ${s.metrics.map((x) => x.name).join(', ')})`);
    s.earlyStopping.mode = m.higherIsBetter === false ? 'min' : 'max';
  }
  // Batches a loader or generator makes are disposed after their step; an array's batches
  // belong to the caller (they are used again next epoch).
  const ownsBatches = !Array.isArray(train);
  checkModel(e, s.model, op);

  let history: GeneralEpochLog[] = [];
  let first = 1;
  if (c.resume !== undefined && c.resume !== false) {
    const r = await loadCheckpoint(s, e, c.resume as number | true, train, valid, op);
    history = r.history;
    first = r.epoch + 1;
  }
  const showBar = c.progress ?? (isNode() && Boolean((globalThis as { process?: { stderr?: { isTTY?: boolean } } }).process?.stderr?.isTTY));
  const bar: ProgressBar | null = showBar && isNode() ? await nodeProgressBar() : null;
  let stopReason: GeneralHistory['stopReason'] = 'epochs';

  for (let epoch = first; epoch <= epochs; epoch++) {
    checkAbort();
    if (cb.onEpochBegin) await cb.onEpochBegin(epoch);
    // Dropout and other engine randomness: one seed per (seed, epoch), so a resumed run draws
    // what the uninterrupted one did.
    e.raw.seed((s.seed * 1000003 + epoch * 7919) % 2147483647);
    (s.model as { train?: () => unknown }).train?.();
    for (const m of s.metrics) m.reset();
    const start = now();
    let batch = 0;
    let items = 0;
    const length = (train as LoaderLike).length;
    const numBatches = typeof length === 'number' ? Math.ceil(length / 1) : NaN;
    bar?.start(Number.isFinite(numBatches) ? numBatches : 0, epoch, epochs);
    try {
      for await (const b of train as AsyncIterable<unknown>) {
        batch++;
        let stepped: { loss: number; n: number };
        try {
          checkAbort();
          stepped = e.asyncRead !== null ? await generalStepAsync(e, s, b, epoch, batch, op) : generalStep(e, s, b, epoch, batch, op);
        } finally {
          // The batch is disposed whether its step succeeded or threw (a throwing trainStep,
          // a refused NonFinite step, a model without forward): nothing leaks per failure.
          if (ownsBatches) disposeBatch(e, b);
        }
        const { loss, n } = stepped;
        items += n;
        const ips = items / Math.max(1e-9, (now() - start) / 1000);
        bar?.update(batch, { loss, itemsPerSecond: ips });
        if (cb.onBatchEnd) await cb.onBatchEnd({ epoch, batch, numBatches, loss, lr: s.optimizer.learningRate, itemsPerSecond: ips });
        if (batch % 8 === 0) await nextTurn();
      }
      if (s.stepper.pending() > 0 && e.asyncRead !== null) {
        await applyPendingAsync(e, s, epoch, batch, op);
      } else if (s.stepper.pending() > 0) {
        const { list, refresh } = gatherParams(e, s.model, op);
        try {
          camelErrors(() => s.stepper.applyList(s.optimizer._raw(op), list, epoch, batch));
          refresh();
        } finally {
          list.release();
          list.delete();
        }
      }
    } catch (err) {
      s.stepper.clear();
      bar?.stop();
      throw err;
    }
    bar?.stop();
    const seconds = (now() - start) / 1000;
    const trainValues = metricValues(s.metrics);
    let validValues: Record<string, number> = {};
    if (valid !== undefined) {
      for (const m of s.metrics) m.reset();
      (s.model as { eval?: () => unknown }).eval?.();
      const wasEnabled = e.raw.isGradEnabled();
      e.raw.setGradEnabled(false);
      try {
        for await (const b of valid as AsyncIterable<unknown>) {
          try {
            checkAbort();
            if (e.asyncRead !== null) await validStepAsync(e, s, b, op);
            else scoped(e, () => {
              const r = checkStepOutput(s.validStep(s.model, b), e, op, 'validStep');
              const value = Number(r.loss.item());
              const n = r.output ? (r.output.shape[0] ?? 1) : 1;
              for (const m of s.metrics) m.update(r.output as Tensor, r.targets as Tensor, { loss: value, lr: s.optimizer.learningRate, batchSize: n });
            });
          } finally {
            if (!Array.isArray(valid)) disposeBatch(e, b);
          }
        }
      } finally {
        e.raw.setGradEnabled(wasEnabled);
        (s.model as { train?: () => unknown }).train?.();
      }
      validValues = metricValues(s.metrics);
    }
    const log: GeneralEpochLog = {
      epoch, train: trainValues, valid: validValues,
      loss: trainValues.loss ?? NaN, accuracy: trainValues.accuracy ?? NaN,
      lr: s.optimizer.learningRate, itemsPerSecond: items / Math.max(1e-9, seconds), seconds,
    };
    if (valid !== undefined) {
      log.validLoss = validValues.loss ?? NaN;
      log.validAccuracy = validValues.accuracy ?? NaN;
    }
    history.push(log);
    const pick = (key: string) => {
      const [phase, name] = key.split('.');
      const v = (phase === 'valid' ? validValues : trainValues)[name];
      if (v === undefined) throw fail('Config', `${op}: "${key}" names no metric of this run (metrics: ${s.metrics.map((m) => m.name).join(', ')}${valid === undefined ? '; no validLoader' : ''})`);
      return v;
    };
    if (s.plateau) s.plateau.step(pick(monitor));
    const stop = s.earlyStopping ? s.earlyStopping.update(pick(s.earlyStopping.monitor)) : false;
    if (s.checkpointer && (epoch % s.checkpointer.every === 0 || epoch === epochs || stop)) {
      await saveCheckpoint(s, e, epoch, history, train, valid, op);
    }
    if (cb.onEpochEnd) await cb.onEpochEnd({ ...log });
    if (stop) {
      stopReason = 'earlyStopping';
      break;
    }
    await nextTurn();
  }
  const out: GeneralHistory = {
    epochs: history,
    loss: history.map((h) => h.loss),
    accuracy: history.map((h) => h.accuracy),
    validLoss: history.map((h) => h.validLoss ?? NaN),
    validAccuracy: history.map((h) => h.validAccuracy ?? NaN),
    stopReason,
  };
  if (cb.onTrainEnd) await cb.onTrainEnd(out);
  return out;
}

// ---------------------------------------------------------------- progress bar

/** A dynamic import bundlers leave alone (Node-only modules). */
async function nodeImport<T>(specifier: string): Promise<T> {
  return (await import(/* @vite-ignore */ specifier)) as T;
}

/** A terminal progress bar of one epoch (Node). */
interface ProgressBar {
  start(total: number, epoch: number, epochs: number): void;
  update(done: number, payload: { loss: number; itemsPerSecond: number }): void;
  stop(): void;
}

interface CliProgressModule {
  SingleBar: new (opts: Record<string, unknown>, preset?: unknown) => {
    start(total: number, value: number, payload?: Record<string, unknown>): void;
    update(value: number, payload?: Record<string, unknown>): void;
    setTotal(total: number): void;
    stop(): void;
  };
  Presets: { shades_classic: unknown };
}

/**
 * The Node progress bar: cli-progress (a dependency of kiln-dl) showing batches, items/s,
 * ETA and the running loss; a minimal one-line renderer if that package cannot be loaded.
 * Written to stderr, so stdout stays the program's.
 */
async function nodeProgressBar(): Promise<ProgressBar> {
  const stream = (globalThis as unknown as { process: { stderr: { write(s: string): void; isTTY?: boolean } } }).process.stderr;
  try {
    const mod = await nodeImport<CliProgressModule & { default?: CliProgressModule }>('cli-progress');
    const cli = (mod.SingleBar ? mod : mod.default) as CliProgressModule;
    const bar = new cli.SingleBar({
      format: 'epoch {epoch}/{epochs} |{bar}| {value}/{total} batches | {ips} items/s | ETA {eta_formatted} | loss {loss}',
      stream, hideCursor: true, clearOnComplete: false, etaBuffer: 20, noTTYOutput: true, notTTYSchedule: 1000,
    }, cli.Presets.shades_classic);
    return {
      start(total, epoch, epochs) {
        bar.start(total, 0, { epoch, epochs, ips: '-', loss: '-' });
      },
      update(done, p) {
        bar.update(done, { ips: p.itemsPerSecond.toFixed(0), loss: p.loss.toFixed(4) });
      },
      stop() {
        bar.stop();
      },
    };
  } catch {
    let total = 0;
    let epochText = '';
    let start = 0;
    return {
      start(t, epoch, epochs) {
        total = t;
        epochText = `epoch ${epoch}/${epochs}`;
        start = Date.now();
      },
      update(done, p) {
        const elapsed = (Date.now() - start) / 1000;
        const eta = done > 0 && total > 0 ? ((total - done) * elapsed) / done : NaN;
        stream.write(`\r${epochText} ${done}/${total || '?'} batches | ${p.itemsPerSecond.toFixed(0)} items/s | ETA ${Number.isFinite(eta) ? `${eta.toFixed(0)}s` : '-'} | loss ${p.loss.toFixed(4)}`);
      },
      stop() {
        stream.write('\n');
      },
    };
  }
}
