// Harness cases of the reductions, sort and softmax (engine/src/wgpu/reduce_ops.cpp,
// softmax_ops.cpp); the cases are tests/webgpu/cases_reduce.mjs.
#include <stdexcept>

#include "harness.hpp"

namespace kiln::harness {
namespace {

// ops.def's snake name of a reduction ("sum", "mean", ...).
ReduceOp reduce_op_of(const std::string& name) {
#define KILN_REDUCE_OP(Name, snake, ...) \
  if (name == #snake) return ReduceOp::Name;
#include "kiln/backend/ops.def"
  throw std::invalid_argument("harness: unknown reduction " + name);
}

KILN_HARNESS_OP(reduce, { return Ops::reduce(reduce_op_of(a.at("op").get<std::string>()), in[0]); });

KILN_HARNESS_OP(reduce_dim, {
  return Ops::reduce_dim(reduce_op_of(a.at("op").get<std::string>()), in[0], a.at("dim").get<std::int64_t>());
});

// A reduction of arange(0, n) (made on the host and uploaded, so large inputs cost no JS
// arrays): a whole-tensor reduction when attrs.dim is absent.
KILN_HARNESS_OP(reduce_arange, {
  const auto x = Ops::arange(0, a.at("n").get<double>(), 1, dtype_of(a.at("dtype").get<std::string>()), {});
  if (a.contains("argmax")) return Ops::argmax(x, 0);
  if (a.contains("dim")) return Ops::reduce_dim(reduce_op_of(a.at("op").get<std::string>()), x, a.at("dim").get<std::int64_t>());
  return Ops::reduce(reduce_op_of(a.at("op").get<std::string>()), x);
});

KILN_HARNESS_OP(max_dim_with_indices, {
  return pick(Ops::max_dim_with_indices(in[0], a.at("dim").get<std::int64_t>()), a);
});

KILN_HARNESS_OP(min_dim_with_indices, {
  return pick(Ops::min_dim_with_indices(in[0], a.at("dim").get<std::int64_t>()), a);
});

KILN_HARNESS_OP(argmax, { return Ops::argmax(in[0], a.at("dim").get<std::int64_t>()); });

KILN_HARNESS_OP(argmin, { return Ops::argmin(in[0], a.at("dim").get<std::int64_t>()); });

KILN_HARNESS_OP(var_mean, {
  return pick(Ops::var_mean(in[0], a.at("dim").get<std::int64_t>(), a.value("unbiased", true)), a);
});

KILN_HARNESS_OP(sort_with_indices, {
  return pick(Ops::sort_with_indices(in[0], a.at("dim").get<std::int64_t>(), a.value("descending", false)), a);
});

KILN_HARNESS_OP(softmax, { return Ops::softmax(in[0], a.at("dim").get<std::int64_t>()); });

KILN_HARNESS_OP(log_softmax, { return Ops::log_softmax(in[0], a.at("dim").get<std::int64_t>()); });

}  // namespace
}  // namespace kiln::harness
