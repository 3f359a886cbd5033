// The raw Embind module (bindings/*.cpp), as the package's TypeScript sees it: the one
// hand-written declaration of the engine's JS surface (Emscripten 3.1.6 cannot emit one,
// TOOLCHAIN.md). Internal: none of these types is part of the package's public API.
// Tensor entry points take and return RawTensor handles (bindings/js_tensor.hpp); every
// one of them throws a KilnError on bad input (once finishModule has wrapped it in the error
// boundary, boundary.ts: the C++ side records the error, the wrapper throws it from JS).

/**
 * A config or spec as the engine takes it: the tree of its JSON (null, booleans, finite
 * numbers, strings, arrays, plain objects), read by the engine as JSON text of it would be
 * (bindings/config_js.hpp). Crossing as a value, it needs no JSON parser in the engine.
 * Made by engineValue (tensor/checks.ts).
 */
export type EngineValue = null | boolean | number | string | EngineValue[] | { [key: string]: EngineValue };

/** An Embind object: deleted explicitly (its C++ destructor runs). */
export interface EmbindHandle {
  delete(): void;
  isDeleted(): boolean;
}

/** The C++ JsTensor behind a JS Tensor. `dtype()`: 0 float32, 1 int32, 2 bool. */
export interface RawTensor extends EmbindHandle {
  dtype(): number;
  shape(): number[];
  rank(): number;
  numel(): number;
  bytes(): number;
  isTracked(): boolean;
  clone(): RawTensor;
}

export interface RawGradients extends EmbindHandle {
  size(): number;
}

/** A handle the package's HandleOwner frees with release() then delete(). */
export interface RawOwned extends EmbindHandle {
  release(): void;
}

export interface RawModel extends RawOwned {
  forward(x: RawTensor): RawTensor;
  numParams(): number;
  configJson(): string;
  /** JSON.parse(configJson()), built without the text (bindings/config_js.hpp config_to_js). */
  configValue(): { layers: Record<string, unknown>[] };
  describe(): string;
  summary(inputShape: number[] | null): {
    input: string | null;
    rows: [number, string, string, number][];
    total: number;
    trainable: number;
  };
  saveSafetensors(): Uint8Array;
  loadSafetensors(bytes: Uint8Array): void;
  setTraining(mode: boolean): void;
  training(): boolean;
  parameters(): Record<string, RawTensor>;
  inputItemSize(): number;
  outputItemShape(inputShape: readonly number[]): number[];
  // ---- module (bindings/nn_sequential.cpp: built-in layers as kiln.Modules)
  /** {key: {id, requiresGrad, float}}: ParamIds and flags, keys as in the records. */
  parameterInfo(): Record<string, { id: number; requiresGrad: boolean; float: boolean }>;
  /** Sets parameters by key keeping their ParamIds; all checked before any is set. */
  setParameters(values: Record<string, RawTensor>, op: string): void;
  /** Freezes/unfreezes the float parameter key (every one for ''). */
  setRequireGrad(key: string, require: boolean): void;
  /** Records with float parameters as 'float32' | 'float16' | 'bfloat16'. */
  saveSafetensorsAs(dtype: string): Uint8Array;
  /** A deep copy with new ParamIds. */
  cloneNew(): RawModel;
}

/** kiln.optim.ReduceLROnPlateau's engine object (bindings/train_optim.cpp). */
export interface RawPlateau extends RawOwned {
  step(metric: number): number;
  lr(): number;
  state(): { lr: number; best: number; numBadEpochs: number; cooldownCounter: number; steps: number };
  loadState(lr: number, best: number, numBadEpochs: number, cooldownCounter: number, steps: number): void;
}

/** The guarded step of a Learner with a user trainStep (bindings/train_learner.cpp). */
export interface RawStepper extends RawOwned {
  stepList(optimizer: RawOptimizer, list: RawParamList, loss: RawTensor, epoch: number, batch: number): number;
  accumulateList(list: RawParamList, loss: RawTensor, epoch: number, batch: number): number;
  applyList(optimizer: RawOptimizer, list: RawParamList, epoch: number, batch: number): void;
  pending(): number;
  clear(): void;
  /** The webgpu engine only: stepList with its checks on the device (no read). */
  stepListDeferred?(optimizer: RawOptimizer, list: RawParamList, loss: RawTensor, epoch: number, batch: number): void;
  /** The webgpu engine only: f32 [5], the guard's status and the step's loss, to read. */
  statusAndLoss?(): RawTensor;
  /** The webgpu engine only: settles the step with statusAndLoss's values (NonFinite if refused). */
  settle?(optimizer: RawOptimizer, values: Float32Array): void;
  /** The webgpu engine only: accumulateList without reading the loss (checkLoss after the read). */
  accumulateListDeferred?(list: RawParamList, loss: RawTensor): number;
  /** The webgpu engine only: accumulateList's check of a loss read by JS (NonFinite). */
  checkLoss?(value: number, epoch: number, batch: number): void;
  /** The webgpu engine only: applyList with its checks on the device (then statusAndLoss, settle). */
  applyListDeferred?(optimizer: RawOptimizer, list: RawParamList, epoch: number, batch: number): void;
}

export interface RawOptimizer extends RawOwned {
  step(model: RawModel, grads: RawGradients): void;
  lastLr(): number;
  steps(): number;
}

export interface RawDatasetInfo {
  length: number;
  itemShape: number[];
  targetShape: number[] | null;
  numClasses: number;
}

export interface RawDataset extends RawOwned {
  length(): number;
  itemShape(): number[];
  info(): RawDatasetInfo;
  shuffle(seed: number): RawDataset;
  slice(begin: number, end: number): RawDataset;
  toArrays(): { x: Float32Array; y: Int32Array | Float32Array };
}

/** What one call of trainBatches / evalBatches reports. */
export interface RawBatchesResult {
  loss: number;
  accuracy: number;
  lossSum: number;
  correct: number;
  items: number;
  batches: number;
  done: boolean;
}

export interface RawLearner extends RawOwned {
  trainBatch(x: Float32Array, y: Int32Array | Float32Array, n: number): { loss: number; accuracy: number };
  /** fitEpoch: the epoch's number within the fit() in progress (1-based), for messages. */
  beginEpoch(data: RawDataset, batchSize: number, shuffle: boolean, fitEpoch: number): number;
  trainBatches(count: number): RawBatchesResult;
  evalBatches(data: RawDataset, batchSize: number, first: number, count: number): RawBatchesResult;
  predict(x: Float32Array, n: number, batchSize: number): Float32Array;
  predictDataset(data: RawDataset, batchSize: number): Float32Array;
  info(): { epoch: number; steps: number; learningRate: number };
  /**
   * The webgpu engine only (its reads are asynchronous): after trainBatches / evalBatches, a
   * float32 [7] tensor of the pending steps' guard status and the batches' totals, to read
   * (await data()) and give to settle, which checks the steps (NonFinite for a refused one)
   * and returns the totals as trainBatches does on the cpu engine.
   */
  pendingTotals?(): RawTensor;
  settle?(values: Float32Array, done: boolean): RawBatchesResult;
}

/** One row of engine/include/kiln/backend/ops.def, as bindings/op_table.cpp returns it. */
export interface RawOpRow {
  /** The enumerator's value (BinaryOp, UnaryOp, CompareOp or ReduceOp). */
  id: number;
  /** The C++ snake_case name (as in error messages). */
  name: string;
  /** The generated JS Tensor method, or null where the JS layer writes it by hand. */
  method: string | null;
  kinds: 'float' | 'numeric' | 'any';
}

export interface RawOpTable {
  binary: RawOpRow[];
  unary: RawOpRow[];
  compare: RawOpRow[];
  reduce: RawOpRow[];
}

/** The instantiated Emscripten module (kiln.mjs / kiln-mt.mjs). */
export interface RawModule {
  /** Set by finishModule: the package's error class. */
  KilnError: unknown;
  /** The boundary's (boundary.ts): the calling thread's shadow stack pointer, saved and restored. */
  stackSave(): number;
  stackRestore(sp: number): void;
  /** 1 if the last entry point failed and its error is not taken yet (js_tensor.cpp). */
  _kiln_error_pending(): number;
  /** The pending error, cleared (null if none). */
  takeError(): { code: string; message: string } | null;
  opTable(): RawOpTable;
  /** The dtypes: their kiln::DType enum values and package names ('float32', ...). */
  dtypeTable(): { code: number; name: string }[];
  // ---- tensors (js_tensor.cpp, tensor_*.cpp)
  tFromTypedArray(values: Float32Array | Int32Array | Uint8Array, shape: readonly number[], dtype: number): RawTensor;
  /** op: the calling factory's name, for messages. */
  tFull(shape: readonly number[], value: number, dtype: number, op: string): RawTensor;
  /** op: the calling factory's name, for messages. */
  tRandom(shape: readonly number[], kind: number, a: number, b: number, dtype: number, op: string): RawTensor;
  tArange(start: number, end: number, step: number, dtype: number): RawTensor;
  tEye(n: number, m: number, dtype: number): RawTensor;
  seed(seed: number): void;
  tDataSync(t: RawTensor): Float32Array | Int32Array | Uint8Array;
  tToString(t: RawTensor, precision: number): string;
  setGradEnabled(enabled: boolean): void;
  isGradEnabled(): boolean;
  memoryStats(): {
    bytes: number; tensors: number; heapBytes: number; mallocBytes: number; buffers: number;
    graphNodes: number; peakBytes: number; totalAllocations: number;
  };
  backendInfo(): { simd: boolean; threads: number; arch: string; build: 'simd' | 'simd-threads' | 'simd-relaxed' | 'simd-threads-relaxed' | 'webgpu'; backend: string };
  setNumThreads(n: number): void;
  tBinary(op: number, a: RawTensor, b: RawTensor): RawTensor;
  tBinaryScalar(op: number, a: RawTensor, scalar: number, scalarOnLeft: boolean): RawTensor;
  tUnary(op: number, a: RawTensor): RawTensor;
  tClamp(a: RawTensor, hasMin: boolean, min: number, hasMax: boolean, max: number): RawTensor;
  tLeakyRelu(a: RawTensor, slope: number): RawTensor;
  tSoftplus(a: RawTensor, beta: number, threshold: number): RawTensor;
  /** bindings/nn_activation_more.cpp: elu, celu (alpha), glu (dim), prelu (weight [numParameters]). */
  tElu(a: RawTensor, alpha: number): RawTensor;
  tCelu(a: RawTensor, alpha: number): RawTensor;
  tGlu(a: RawTensor, dim: number): RawTensor;
  tPrelu(a: RawTensor, weight: RawTensor): RawTensor;
  tSoftmax(a: RawTensor, dim: number, log: boolean): RawTensor;
  tCompare(op: number, a: RawTensor, b: RawTensor): RawTensor;
  tCompareScalar(op: number, a: RawTensor, scalar: number): RawTensor;
  /** op: 0 isNan, 1 isInf, 2 not. */
  tBoolUnary(op: number, a: RawTensor): RawTensor;
  /** op: 0 and, 1 or, 2 xor. */
  tBoolBinary(op: number, a: RawTensor, b: RawTensor): RawTensor;
  tMaskWhere(a: RawTensor, mask: RawTensor, value: RawTensor): RawTensor;
  tMaskFill(a: RawTensor, mask: RawTensor, value: number): RawTensor;
  tCast(a: RawTensor, dtype: number): RawTensor;
  tReduce(op: number, a: RawTensor): RawTensor;
  tReduceDim(op: number, a: RawTensor, dim: number): RawTensor;
  tExtremeDimWithIndices(a: RawTensor, dim: number, min: boolean): [RawTensor, RawTensor];
  tArgExtreme(a: RawTensor, dim: number, min: boolean): RawTensor;
  tVarMean(a: RawTensor, dim: number, unbiased: boolean): [RawTensor, RawTensor];
  tSortWithIndices(a: RawTensor, dim: number, descending: boolean): [RawTensor, RawTensor];
  tMatmul(a: RawTensor, b: RawTensor): RawTensor;
  tReshape(a: RawTensor, shape: readonly number[]): RawTensor;
  tPermute(a: RawTensor, axes: readonly number[]): RawTensor;
  tExpand(a: RawTensor, shape: readonly number[]): RawTensor;
  tRepeatDim(a: RawTensor, dim: number, times: number): RawTensor;
  tFlip(a: RawTensor, dims: readonly number[]): RawTensor;
  /** ranges: [start, end | null, step] per leading dim. */
  tSlice(a: RawTensor, ranges: [number, number | null, number][]): RawTensor;
  tSliceAssign(a: RawTensor, ranges: [number, number | null, number][], values: RawTensor): RawTensor;
  tCat(tensors: RawTensor[], dim: number): RawTensor;
  tSelect(a: RawTensor, dim: number, indices: RawTensor): RawTensor;
  tSelectAssign(a: RawTensor, dim: number, indices: RawTensor, values: RawTensor): RawTensor;
  tGather(a: RawTensor, dim: number, indices: RawTensor): RawTensor;
  tScatter(a: RawTensor, dim: number, indices: RawTensor, values: RawTensor): RawTensor;
  tOneHot(a: RawTensor, numClasses: number): RawTensor;
  // Derived shape ops (tensor_shape.cpp; plans in kiln/tensor/derived.hpp, shared with the
  // typed C++ Tensor). Dims may be negative; `op` names the op in messages. Each returned
  // RawTensor, those in arrays included, is owned by the caller.
  tNarrow(a: RawTensor, dim: number, start: number, length: number, op: string): RawTensor;
  tChunk(a: RawTensor, chunks: number, dim: number, op: string): RawTensor[];
  tSplit(a: RawTensor, splitSize: number, dim: number, op: string): RawTensor[];
  tSplitWithSizes(a: RawTensor, sizes: readonly number[], dim: number, op: string): RawTensor[];
  tTopk(a: RawTensor, k: number, dim: number, op: string): RawTensor;
  /** [values, int32 indices]. */
  tTopkWithIndices(a: RawTensor, k: number, dim: number, op: string): [RawTensor, RawTensor];
  tFlatten(a: RawTensor, start: number, end: number, op: string): RawTensor;
  /** Every size-1 dim removed. */
  tSqueeze(a: RawTensor): RawTensor;
  tSqueezeDim(a: RawTensor, dim: number, op: string): RawTensor;
  tUnsqueezeDim(a: RawTensor, dim: number, op: string): RawTensor;
  tSwapDims(a: RawTensor, dim1: number, dim2: number, op: string): RawTensor;
  tTranspose(a: RawTensor, op: string): RawTensor;
  tRepeat(a: RawTensor, times: readonly number[], op: string): RawTensor;
  /** tensors: one dtype and shape, at least one. */
  tStack(tensors: RawTensor[], dim: number, op: string): RawTensor;
  tSetRequireGrad(a: RawTensor, require: boolean): RawTensor;
  tDetach(a: RawTensor): RawTensor;
  tBackward(a: RawTensor): RawGradients;
  tGrad(a: RawTensor, grads: RawGradients): RawTensor | undefined;
  tGradRemove(a: RawTensor, grads: RawGradients): RawTensor | undefined;
  tGradReplace(a: RawTensor, grads: RawGradients, grad: RawTensor): void;
  // Issue-15 ops (tensor_ops_ext.cpp; kiln/tensor/ops_ext.hpp). dims [] = every dim.
  tAmax(a: RawTensor, dims: readonly number[], keepDim: boolean, min: boolean, op: string): RawTensor;
  tNorm(a: RawTensor, p: number, dims: readonly number[], keepDim: boolean, op: string): RawTensor;
  tVarCorrection(a: RawTensor, dims: readonly number[], correction: number, keepDim: boolean, sqrt: boolean, op: string): RawTensor;
  tPad(a: RawTensor, pads: readonly number[], mode: string, value: number, op: string): RawTensor;
  tTriangle(a: RawTensor, diagonal: number, upper: boolean, op: string): RawTensor;
  tCumsum(a: RawTensor, dim: number, op: string): RawTensor;
  tLinspace(start: number, end: number, steps: number, op: string): RawTensor;
  /** count 1: b is ignored (pass a). */
  tEinsum(equation: string, a: RawTensor, b: RawTensor, count: number, op: string): RawTensor;
  tBackwardRetain(a: RawTensor, retainGraph: boolean): RawGradients;
  // ---- models, training, data (nn_sequential.cpp, train_*.cpp)
  modelCreate(spec: EngineValue, seed: number, single: boolean): RawModel;
  /** The engine's Sequential layer registry: snake_case type names and their spec fields. */
  layerTypes(): { type: string; fields: { name: string; required: boolean }[] }[];
  modelConcat(parts: RawModel[]): RawModel;
  /** Every layer's output of a model for x (bindings/nn_inspect.cpp: Sequential.forwardAll). */
  modelForwardAll(model: RawModel, x: RawTensor): RawTensor[];
  optimizerCreate(kind: string, config: EngineValue, lr: EngineValue): RawOptimizer;
  scheduleValues(schedule: EngineValue, n: number): Float64Array;
  // issue 15 (learner): bindings/train_optim.cpp
  scheduleMomentums(schedule: EngineValue, n: number): Float64Array;
  plateauCreate(config: EngineValue): RawPlateau;
  plateauCreateFor(config: EngineValue, optimizer: RawOptimizer): RawPlateau;
  clipGradNorm(tensors: RawTensor[], maxNorm: number, normType: number, errorIfNonfinite: boolean): { totalNorm: number; tensors: RawTensor[] };
  clipGradNormDevice(tensors: RawTensor[], maxNorm: number, normType: number): { totalNorm: RawTensor; tensors: RawTensor[] };
  clipGradValue(tensors: RawTensor[], clipValue: number): RawTensor[];
  optimizerSetSchedule(optimizer: RawOptimizer, schedule: EngineValue): void;
  optimizerScheduleKind(optimizer: RawOptimizer): string;
  gradientsEmpty(): RawGradients;
  optimizerSaveStateList(optimizer: RawOptimizer, list: RawParamList): Uint8Array;
  optimizerLoadStateList(optimizer: RawOptimizer, list: RawParamList, bytes: Uint8Array): void;
  stepperCreate(): RawStepper;
  datasetFromArrays(x: Float32Array, y: Int32Array | Float32Array, itemShape: readonly number[],
    targetShape: readonly number[] | null, numClasses: number): RawDataset;
  datasetMnist(images: Uint8Array, labels: Uint8Array): RawDataset;
  learnerCreate(model: RawModel, optimizer: RawOptimizer, loss: EngineValue, seed: number,
    inputShape: readonly number[] | null): RawLearner;
  lossForward(loss: EngineValue, logits: RawTensor, targets: RawTensor): RawTensor;
  lossValidate(loss: EngineValue): void;
  // ---- data pipeline and persistence (data_io.cpp)
  /** permutation(n, seed) (stream < 0) or permutation(n, mix_seed(seed, stream)) of kiln/data/rng.hpp. */
  dataPermutation(n: number, seed: number, stream: number): Uint32Array;
  /** The source index of each item of C++'s SamplerDataset(source of len items, size, mode, seed). */
  dataSamplerIndices(len: number, size: number, withReplacement: boolean, seed: number): Uint32Array;
  /** The whole file or an error; I64 entries carry `bytes` (no tensor) when int64Bytes. */
  ioReadSafetensors(bytes: Uint8Array, int64Bytes: boolean): {
    metadata: Record<string, string>;
    entries: { name: string; dtype: string; shape: number[]; tensor?: RawTensor; bytes?: Uint8Array }[];
  };
  // ---- module (bindings/module_params.cpp: kiln.Module, kiln.Param, optimizer.step of any module)
  paramCreate(value: RawTensor, requiresGrad: boolean): RawParam;
  paramListCreate(): RawParamList;
  optimizerStepParams(optimizer: RawOptimizer, list: RawParamList, grads: RawGradients): void;
  /** As optimizerStepParams, guarded as train_step (NonFinite naming op, epoch, batch; nothing applied). */
  optimizerStepParamsGuarded(optimizer: RawOptimizer, list: RawParamList, grads: RawGradients,
    op: string, epoch: number, batch: number): void;
  safetensorsEncode(entries: [string, RawTensor][], dtype: string): Uint8Array;
  safetensorsDecode(bytes: Uint8Array): [string, RawTensor][];
  /** PyTorch checkpoint bytes -> its tensors in key order (bindings/record_pytorch.cpp). */
  pytorchDecode(bytes: Uint8Array, topLevelKey: string | null): { name: string; dtype: string; shape: number[]; tensor: RawTensor }[];
  /**
   * The engine's decision of a module's load (record_load.cpp): which parameter takes which
   * entry of SafeTensors bytes or held tensors, under the options; throws listing every
   * problem; the tensors returned are new handles (delete them).
   */
  loadPlan(expected: [string, number[], number][], source: Uint8Array | [string, RawTensor][],
    options: RawLoadOptions, op: string): { assign: [string, RawTensor][]; report: RawLoadReport };
  // ---- Burn's named MessagePack records (bindings/record_mpk.cpp: kiln.io.readNamedMpk / writeNamedMpk)
  /** The whole record or an error: tensors by field path in key order, BurnMetadata's strings. */
  ioReadNamedMpk(bytes: Uint8Array): {
    metadata: Record<string, string>;
    entries: { name: string; dtype: string; shape: number[]; tensor: RawTensor }[];
  };
  /** The record's bytes at precision 'full' (f32, i32) or 'half' (f16, i16). */
  ioWriteNamedMpk(entries: [string, RawTensor][], precision: string): Uint8Array;
  // ---- kiln.nn.functional (nn_functional.cpp): size arrays have one entry per spatial dim
  // (`dims` 1 or 2); a null tensor is an absent bias / weight / statistic.
  fConv(x: RawTensor, weight: RawTensor, bias: RawTensor | null, stride: number[], padding: number[],
    dilation: number[], groups: number, dims: number): RawTensor;
  fConvTranspose2d(x: RawTensor, weight: RawTensor, bias: RawTensor | null, stride: number[], padding: number[],
    paddingOut: number[], dilation: number[], groups: number): RawTensor;
  fMaxPool(x: RawTensor, kernel: number[], stride: number[], padding: number[], dilation: number[],
    ceilMode: boolean, dims: number): RawTensor;
  fAvgPool(x: RawTensor, kernel: number[], stride: number[], padding: number[], countIncludePad: boolean,
    ceilMode: boolean, dims: number): RawTensor;
  fAdaptiveAvgPool(x: RawTensor, outputSize: number[], dims: number): RawTensor;
  fDropout(x: RawTensor, p: number, mask: RawTensor | null, training: boolean): RawTensor;
  fLinear(x: RawTensor, weight: RawTensor, bias: RawTensor | null): RawTensor;
  fEmbedding(indices: RawTensor, weight: RawTensor, paddingIdx: number | null): RawTensor;
  fLayerNorm(x: RawTensor, normalizedShape: number[], weight: RawTensor | null, bias: RawTensor | null, epsilon: number): RawTensor;
  fGroupNorm(x: RawTensor, numGroups: number, weight: RawTensor | null, bias: RawTensor | null, epsilon: number): RawTensor;
  /** [output, runningMean, runningVar, hasStats], each tensor owned by the caller (placeholders when !hasStats). */
  fBatchNorm(x: RawTensor, runningMean: RawTensor | null, runningVar: RawTensor | null, weight: RawTensor | null,
    bias: RawTensor | null, training: boolean, momentum: number, epsilon: number): [RawTensor, RawTensor, RawTensor, boolean];
  // ---- lstm / gru layers (nn_recurrent.cpp): [output, hidden, cell, hasCell], each owned
  // by the caller (cell a placeholder for gru); null hidden / cell: zeros.
  recurrentForwardWithState(model: RawModel, x: RawTensor, hidden: RawTensor | null,
    cell: RawTensor | null): [RawTensor, RawTensor, RawTensor, boolean];
  // ---- attention layers (bindings/nn_attention.cpp): single-layer models; masks bool or null
  /** [context, weights], each owned by the caller. */
  mhaAttend(model: RawModel, query: RawTensor, key: RawTensor, value: RawTensor, maskPad: RawTensor | null,
    maskAttn: RawTensor | null): [RawTensor, RawTensor];
  transformerEncoderForward(model: RawModel, x: RawTensor, maskPad: RawTensor | null, maskAttn: RawTensor | null): RawTensor;
  transformerDecoderForward(model: RawModel, target: RawTensor, memory: RawTensor, targetMaskPad: RawTensor | null,
    targetMaskAttn: RawTensor | null, memoryMaskPad: RawTensor | null, memoryMaskAttn: RawTensor | null): RawTensor;
  generateAutoregressiveMask(batchSize: number, seqLength: number): RawTensor;
  /** conv3d: size arrays of 3 entries (depth, height, width). */
  fConv3d(x: RawTensor, weight: RawTensor, bias: RawTensor | null, stride: number[], padding: number[],
    dilation: number[], groups: number): RawTensor;
  /** conv_transpose1d (dims 1) / conv_transpose3d (dims 3). */
  fConvTransposeNd(x: RawTensor, weight: RawTensor, bias: RawTensor | null, stride: number[], padding: number[],
    paddingOut: number[], dilation: number[], groups: number, dims: number): RawTensor;
  // ---- kiln.nn.functional's 3-D pools and interpolate (nn_resample.cpp): triples [depth, height, width]
  fMaxPool3d(x: RawTensor, kernel: number[], stride: number[], padding: number[], dilation: number[], ceilMode: boolean): RawTensor;
  fAvgPool3d(x: RawTensor, kernel: number[], stride: number[], padding: number[], countIncludePad: boolean, ceilMode: boolean): RawTensor;
  fAdaptiveAvgPool3d(x: RawTensor, outputSize: number[]): RawTensor;
  /** size or scaleFactor null when absent; mode 'nearest' | 'bilinear'. */
  fInterpolate(x: RawTensor, size: number[] | null, scaleFactor: number[] | null, mode: string, alignCorners: boolean): RawTensor;
}
/** The C++ parameter of a kiln.Param (module::Param with its ParamId). */
export interface RawParam extends RawOwned {
  tensor(): RawTensor;
  id(): number;
  requiresGrad(): boolean;
  setRequiresGrad(require: boolean): void;
  assign(value: RawTensor, op: string): void;
  cloneNew(): RawParam;
}
/** Named C++ parameters gathered for one optimizer step (module_params.hpp ParamList). */
export interface RawParamList extends RawOwned {
  addParam(name: string, param: RawParam): void;
  addTensor(name: string, holder: RawParam, value: RawTensor): void;
  addModel(prefix: string, model: RawModel): void;
  size(): number;
  names(): string[];
  /** Per entry, whether the last step had its gradient (and so updated it). */
  stepped(): boolean[];
}

/** The Emscripten factory (kiln.mjs, kiln-mt.mjs): options in, the module out. */
export type CreateModule = (options: Record<string, unknown>) => Promise<RawModule>;

/** The load options as the engine takes them (module_class.ts, loadOptions). */
export interface RawLoadOptions {
  strict: boolean;
  allowPartial: boolean;
  /** [pattern, replacement, ignoreCase] */
  remap: [string, string, boolean][];
  /** Burn's adapter: its Linear weight patterns [pattern, ignoreCase]; null for none. */
  linearWeights: [string, boolean][] | null;
}

/** The engine's load report (record_load.cpp, js_report). */
export interface RawLoadReport {
  applied: string[];
  missing: string[];
  unexpected: string[];
  mismatched: string[];
  remapped: [string, string][];
  transposed: string[];
}
