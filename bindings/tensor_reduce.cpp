// Reductions, arg-reductions, variance, sorting and matmul of the JS Tensor.
#include <emscripten/bind.h>

#include "js_tensor.hpp"

using emscripten::val;

namespace kiln_js {
namespace {
using kiln::DType;
using kiln::ReduceOp;
using Ops = AD::FloatOps;

ReduceOp reduce_op(int op) {
  if (op < 0 || op >= kiln::reduce_op_count) {
    kiln::throw_error<kiln::TypeError>("reduce: unknown op code ", op);
  }
  return static_cast<ReduceOp>(op);
}

std::int64_t dim_arg(double dim, const char* op) {
  if (std::abs(dim) > 1e15 || std::floor(dim) != dim) {
    kiln::throw_error<kiln::IndexError>(op, ": dim ", dim, " is out of range");
  }
  return static_cast<std::int64_t>(dim);
}

bool logical(ReduceOp op) { return op == ReduceOp::Any || op == ReduceOp::All; }

JsTensor reduce(int op, const JsTensor& x) {
  return guarded([&] {
    // Whole-tensor: the engine's [1] (Burn's rule) as the JS API's rank-0 scalar (PyTorch's).
    const ReduceOp o = reduce_op(op);
    if (x.is_float() && !logical(o)) return as_scalar(JsTensor(Ops::reduce(o, op_input(x))));
    return as_scalar(JsTensor(InnerOps::reduce(o, x.primitive())));
  });
}

JsTensor reduce_dim(int op, const JsTensor& x, double dim) {
  return guarded([&] {
    const ReduceOp o = reduce_op(op);
    const std::int64_t d = dim_arg(dim, "reduceDim");
    if (x.is_float() && !logical(o)) return JsTensor(Ops::reduce_dim(o, op_input(x), d));
    return JsTensor(InnerOps::reduce_dim(o, x.primitive(), d));
  });
}

/// Two tensors returned together, as a JS array [first, second] of owned RawTensors
/// (Embind value_array; pushing class values into a val array would hand JS temporaries).
struct TensorPair {
  JsTensor first;
  JsTensor second;
};

TensorPair pair(JsTensor a, JsTensor b) { return TensorPair{std::move(a), std::move(b)}; }

/// [values, indices] of the max (min when `min`) along dim, dim kept.
TensorPair extreme_dim_with_indices(const JsTensor& x, double dim, bool min) {
  return guarded([&] {
    const std::int64_t d = dim_arg(dim, min ? "minDimWithIndices" : "maxDimWithIndices");
    if (x.is_float()) {
      auto r = min ? Ops::min_dim_with_indices(op_input(x), d)
                   : Ops::max_dim_with_indices(op_input(x), d);
      return pair(JsTensor(std::move(r.first)), JsTensor(std::move(r.second)));
    }
    auto r = min ? InnerOps::min_dim_with_indices(x.primitive(), d)
                 : InnerOps::max_dim_with_indices(x.primitive(), d);
    return pair(JsTensor(std::move(r.first)), JsTensor(std::move(r.second)));
  });
}

JsTensor arg_extreme(const JsTensor& x, double dim, bool min) {
  return guarded([&] {
    const std::int64_t d = dim_arg(dim, min ? "argmin" : "argmax");
    return JsTensor(min ? InnerOps::argmin(x.primitive(), d) : InnerOps::argmax(x.primitive(), d));
  });
}

/// [variance, mean] along dim (kept).
TensorPair var_mean(const JsTensor& x, double dim, bool unbiased) {
  return guarded([&] {
    check_dtype("var", x, DType::F32);
    auto r = Ops::var_mean(op_input(x), dim_arg(dim, "var"), unbiased);
    return pair(JsTensor(std::move(r.first)), JsTensor(std::move(r.second)));
  });
}

/// [values, indices] sorted along dim (stable).
TensorPair sort_with_indices(const JsTensor& x, double dim, bool descending) {
  return guarded([&] {
    const std::int64_t d = dim_arg(dim, "sort");
    if (x.is_float()) {
      auto r = Ops::sort_with_indices(op_input(x), d, descending);
      return pair(JsTensor(std::move(r.first)), JsTensor(std::move(r.second)));
    }
    auto r = InnerOps::sort_with_indices(x.primitive(), d, descending);
    return pair(JsTensor(std::move(r.first)), JsTensor(std::move(r.second)));
  });
}

/// [..., m, k] x [..., k, n] -> [..., m, n] (rank >= 2 each; the JS layer handles rank 1).
JsTensor matmul(const JsTensor& a, const JsTensor& b) {
  return guarded([&] {
    check_dtype("matmul", a, DType::F32);
    check_dtype("matmul", b, DType::F32);
    if (a.shape().rank() < 2 || b.shape().rank() < 2) {
      kiln::throw_error<kiln::RankError>("matmul: both operands need rank >= 1: lhs ", a.shape(),
                                         " vs rhs ", b.shape());
    }
    // The engine broadcasts batch dims of equal rank; lower-rank operands get leading 1s.
    FloatPrim lhs = op_input(a);
    FloatPrim rhs = op_input(b);
    const std::size_t ra = a.shape().rank();
    const std::size_t rb = b.shape().rank();
    if (ra != rb) {
      const std::size_t r = std::max(ra, rb);
      auto lift = [r](FloatPrim p, const kiln::Shape& s) {
        std::vector<std::int64_t> dims(r, 1);
        for (std::size_t i = 0; i < s.rank(); ++i) dims[r - s.rank() + i] = s[i];
        return Ops::reshape(std::move(p), dims);
      };
      if (ra < r) lhs = lift(std::move(lhs), a.shape());
      if (rb < r) rhs = lift(std::move(rhs), b.shape());
    }
    return JsTensor(Ops::matmul(lhs, rhs));
  });
}

}  // namespace
}  // namespace kiln_js

EMSCRIPTEN_BINDINGS(kiln_tensor_reduce) {
  using namespace kiln_js;
  using emscripten::function;
  emscripten::value_array<TensorPair>("TensorPair")
      .element(&TensorPair::first)
      .element(&TensorPair::second);
  function("tReduce", &reduce);
  function("tReduceDim", &reduce_dim);
  function("tExtremeDimWithIndices", &extreme_dim_with_indices);
  function("tArgExtreme", &arg_extreme);
  function("tVarMean", &var_mean);
  function("tSortWithIndices", &sort_with_indices);
  function("tMatmul", &matmul);
}
