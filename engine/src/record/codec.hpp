#pragma once
// Shared by safetensors.cpp and recorder.cpp: decoding a stored tensor into host data
// without throwing, so the recorder can gather every problem into one error.
#include <string>

#include "kiln/core/dtype.hpp"
#include "kiln/core/tensor_data.hpp"
#include "kiln/record/safetensors.hpp"

namespace kiln::record::codec {

/// Whether a stored dtype decodes into host `dtype` (see SafetensorsTensor::to_data).
bool decodes_to(SafetensorsDType stored, DType dtype) noexcept;

/// Decodes `tensor` into `out` (host `dtype`, same shape). On failure returns false and
/// sets `problem` to a message without an op prefix ("I64 value 3000000000 at element 0
/// does not fit in i32").
bool decode(const SafetensorsTensor& tensor, DType dtype, TensorData& out, std::string& problem);

}  // namespace kiln::record::codec
