// The frame of a printed tensor, after Burn's Display for Tensor: its values (TensorData's
// operator<<, engine/src/core/print.cpp), then shape, device, backend, kind and dtype.
#include <ostream>
#include <string_view>

#include "kiln/core/tensor_data.hpp"
#include "kiln/tensor/tensor.hpp"

namespace kiln::detail {

void print_tensor(std::ostream& out, const TensorData& data, std::string_view device,
                  std::string_view backend, std::string_view kind) {
  out << "Tensor {\n  data:\n"
      << data << ",\n  shape:  " << data.shape << ",\n  device:  " << device << ",\n  backend:  \""
      << backend << "\",\n  kind:  \"" << kind << "\",\n  dtype:  \"" << data.dtype << "\",\n}";
}

}  // namespace kiln::detail
