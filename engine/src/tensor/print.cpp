// The frame of a printed tensor, after Burn's Display for Tensor: its values
// (append_values, engine/src/core/print.cpp), then shape, device, backend, kind and dtype.
#include <string>
#include <string_view>

#include "kiln/core/tensor_data.hpp"
#include "kiln/tensor/tensor.hpp"

namespace kiln::detail {

void append_tensor(std::string& out, const TensorData& data, std::string_view device,
                   std::string_view backend, std::string_view kind, int precision) {
  out += "Tensor {\n  data:\n";
  append_values(out, data, precision);
  str_append(out, ",\n  shape:  ", data.shape, ",\n  device:  ", device, ",\n  backend:  \"",
             backend, "\",\n  kind:  \"", kind, "\",\n  dtype:  \"", data.dtype, "\",\n}");
}

}  // namespace kiln::detail
