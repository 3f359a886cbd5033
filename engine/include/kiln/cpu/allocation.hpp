#pragma once
/// The size check every CPU tensor allocation makes, callable before the allocation with the
/// user's op in the message (the JS creation functions: `zeros: shape [100000, 100000] has
/// 10000000000 elements, more than the limit of 2147483647`). The CpuTensor constructor
/// makes the same check under the name "tensor".
#include <string_view>

#include "kiln/core/dtype.hpp"
#include "kiln/core/shape.hpp"

namespace kiln::cpu {

/// Throws LimitError `<op>: ...` if a dim or the element count of `shape` is past 2^31 - 1
/// (kernels index with int32; JS typed arrays stop near 2^31), OutOfMemoryError `<op>: ...`
/// if its bytes in `dtype` are more than half of what size_t addresses (2 GiB in wasm32).
/// Does nothing else: no allocation.
void check_allocation(std::string_view op, const Shape& shape, DType dtype);

}  // namespace kiln::cpu
