// The package's public names besides init(), exported by both entry points (index.ts for
// browsers and bundlers, node.ts for Node): KilnError (a value) and the types.
export { KilnError, type ErrorCode } from './errors.js';
export type { BackendInfo, GradientsStatic, InitOptions, Kiln, TensorStatic } from './api.js';
export type { Tensor } from './tensor/tensor.js';
export type { Gradients } from './tensor/gradients.js';
export type { DType } from './tensor/checks.js';
export type { DataTypeMap, NestedArray, NestedData, TypedArray } from './tensor/data.js';
export type { Distribution, DTypeOption, FromDataOptions } from './tensor/creation.js';
export type { SliceRange } from './tensor/indexing.js';
export type { Dim } from './tensor/shape.js';
export type { Activation } from './tensor/activation.js';
export type { MemoryInfo } from './tensor/memory.js';
export type * from './train_api.js';
export type { Layer, Model, ModelSpec, Sequential } from './nn.js';
export type { Dataset, Learner, Loss, Optimizer, Schedule } from './train.js';
export type { AvgPoolOptions, BatchNormOptions, BatchNormResult, ConvOptions, ConvTranspose2dOptions, MaxPoolOptions, NnFunctional, NormOptions, SizeNd } from './nn_functional.js';
