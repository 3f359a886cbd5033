// Harness cases of the creation ops and cast (engine/src/wgpu/tensor.cpp).
#include "harness.hpp"

namespace kiln::harness {
namespace {

// The input as it was uploaded (from_data, then the read).
KILN_HARNESS_OP(identity, { return in[0]; });

KILN_HARNESS_OP(cast, { return Ops::cast(in[0], dtype_of(a.at("to").get<std::string>())); });

KILN_HARNESS_OP(full, {
  std::vector<std::int64_t> dims = a.at("shape").get<std::vector<std::int64_t>>();
  return Ops::full(Shape(dims), a.at("value").get<double>(), dtype_of(a.at("dtype").get<std::string>()), {});
});

KILN_HARNESS_OP(arange, {
  return Ops::arange(a.at("start").get<double>(), a.at("end").get<double>(), a.at("step").get<double>(),
                     dtype_of(a.at("dtype").get<std::string>()), {});
});

KILN_HARNESS_OP(eye, {
  return Ops::eye(a.at("n").get<std::int64_t>(), a.at("m").get<std::int64_t>(),
                  dtype_of(a.at("dtype").get<std::string>()), {});
});

}  // namespace
}  // namespace kiln::harness
