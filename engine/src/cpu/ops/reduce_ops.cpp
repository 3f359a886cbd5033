// Reductions of the Cpu backend: reduce, reduce_dim, max/min_dim_with_indices, argmax,
// argmin, var_mean. Thin: validate, view the input as [outer, n, inner] around the reduced
// dim, run a kernel of cpu/kernels/reduce.hpp (accuracy and layout notes there).
//
// Semantics (PyTorch unless stated):
// - whole-tensor reductions give shape [1] (Burn), `_dim` reductions keep the dim (size 1);
// - Sum of nothing is 0, Prod 1, Float Mean nan; Max/Min/argmax/argmin over a dim of size 0
//   (or a whole tensor with no elements) throw ShapeError, as PyTorch's "Expected reduction
//   dim to have non-zero size"; reducing a non-empty dim of an empty tensor gives an empty
//   result;
// - Max/Min propagate nan; argmax/argmin: first index on ties, nan counts as the max (min)
//   and the first nan wins (torch.argmax);
// - Int Sum/Prod are exact (accumulated in int64) and throw LimitError when the result does
//   not fit in i32 (PyTorch would return int64; Kiln's Int is i32 and never wraps silently);
//   Int Mean is the floor of the exact mean (floor division of the int64 sum by n, as Burn's
//   integer mean and Python's //); the Int Mean of zero elements throws ShapeError (0 / 0
//   has no i32 value; PyTorch refuses Int means altogether);
// - Any/All accept every kind (value != 0 is true, nan is true) and give Bool;
// - var_mean: Float only; divisor n - 1 (unbiased) or n; n = 1 unbiased gives nan, n = 0 nan.
#include <cstdint>
#include <limits>
#include <vector>

#include "cpu/kernels/reduce.hpp"
#include "cpu/ops/reduce_checks.hpp"
#include "kiln/cpu/cpu.hpp"
#include "kiln/core/check.hpp"

namespace kiln {
namespace {

namespace k = cpu::kernels;

/// The input seen as [outer, n, inner] around the reduced axis.
struct Layout {
  std::size_t outer = 1;
  std::size_t n = 1;
  std::size_t inner = 1;
  std::size_t results() const { return outer * inner; }
};

Layout whole(const CpuTensor& x) {
  return {1, static_cast<std::size_t>(x.num_elements()), 1};
}

Layout around(const Shape& s, std::size_t d) {
  Layout l;
  for (std::size_t i = 0; i < s.rank(); ++i) {
    const auto size = static_cast<std::size_t>(s[i]);
    if (i < d) {
      l.outer *= size;
    } else if (i == d) {
      l.n = size;
    } else {
      l.inner *= size;
    }
  }
  return l;
}

Shape keep_dim(Shape s, std::size_t d) {
  s[d] = 1;
  return s;
}

/// Checks that Int results fit in i32 and narrows them.
void narrow_int(const char* op, const std::vector<std::int64_t>& wide, CpuTensor& out,
                const Shape& in_shape) {
  std::int32_t* dst = out.data<std::int32_t>();
  for (std::size_t i = 0; i < wide.size(); ++i) {
    const std::int64_t v = wide[i];
    if (v < std::numeric_limits<std::int32_t>::min() ||
        v > std::numeric_limits<std::int32_t>::max()) {
      if (v == k::kIntOverflow) {
        throw_error<LimitError>(op,
                                ": the result does not fit in i32: the exact product "
                                "overflows int64 (input shape ",
                                in_shape, ")");
      }
      throw_error<LimitError>(op, ": the result does not fit in i32: ", v, " (input shape ",
                              in_shape, "; Int reductions are exact and never wrap)");
    }
    dst[i] = static_cast<std::int32_t>(v);
  }
}

/// Floor of sum / n (n > 0), as Python's // .
std::int64_t floor_div(std::int64_t sum, std::int64_t n) {
  std::int64_t q = sum / n;
  if ((sum % n != 0) && (sum < 0)) --q;
  return q;
}

CpuTensor run_reduce(ReduceOp op, const CpuTensor& x, const Layout& l, const Shape& out_shape,
                     const char* name, std::optional<std::size_t> dim) {
  cpu::ops::check_reduce(op, name, x.dtype(), x.shape(), l.n, dim);
  if (op == ReduceOp::Any || op == ReduceOp::All) {
    CpuTensor out(out_shape, DType::Bool);
    if (l.results() == 0) return out;
    std::uint8_t* dst = out.data<std::uint8_t>();
    const bool all = op == ReduceOp::All;
    switch (x.dtype()) {
      case DType::F32:
        if (all) {
          cpu::dispatch_apart(k::AllF32{}, x.data<float>(), l.outer, l.n, l.inner, dst);
        } else {
          cpu::dispatch_apart(k::AnyF32{}, x.data<float>(), l.outer, l.n, l.inner, dst);
        }
        break;
      case DType::I32:
        if (all) {
          cpu::dispatch_apart(k::AllI32{}, x.data<std::int32_t>(), l.outer, l.n, l.inner, dst);
        } else {
          cpu::dispatch_apart(k::AnyI32{}, x.data<std::int32_t>(), l.outer, l.n, l.inner, dst);
        }
        break;
      case DType::Bool:
        if (all) {
          cpu::dispatch_apart(k::AllBool{}, x.data<std::uint8_t>(), l.outer, l.n, l.inner, dst);
        } else {
          cpu::dispatch_apart(k::AnyBool{}, x.data<std::uint8_t>(), l.outer, l.n, l.inner, dst);
        }
        break;
    }
    return out;
  }

  CpuTensor out(out_shape, x.dtype());
  if (l.results() == 0) return out;

  if (x.dtype() == DType::F32) {
    const float* src = x.data<float>();
    float* dst = out.data<float>();
    switch (op) {
      case ReduceOp::Sum:
        cpu::dispatch_apart(k::SumF32{}, src, l.outer, l.n, l.inner, 1.0, dst);
        break;
      case ReduceOp::Mean:  // n = 0: 0 / 0 = nan
        cpu::dispatch_apart(k::SumF32{}, src, l.outer, l.n, l.inner, static_cast<double>(l.n), dst);
        break;
      case ReduceOp::Prod:
        cpu::dispatch_apart(k::ProdF32{}, src, l.outer, l.n, l.inner, 1.0, dst);
        break;
      case ReduceOp::Max: cpu::dispatch_apart(k::MaxF32{}, src, l.outer, l.n, l.inner, dst); break;
      case ReduceOp::Min: cpu::dispatch_apart(k::MinF32{}, src, l.outer, l.n, l.inner, dst); break;
      default: break;
    }
    return out;
  }

  const std::int32_t* src = x.data<std::int32_t>();
  if (op == ReduceOp::Max || op == ReduceOp::Min) {
    std::int32_t* dst = out.data<std::int32_t>();
    if (op == ReduceOp::Max) {
      cpu::dispatch_apart(k::MaxI32{}, src, l.outer, l.n, l.inner, dst);
    } else {
      cpu::dispatch_apart(k::MinI32{}, src, l.outer, l.n, l.inner, dst);
    }
    return out;
  }
  std::vector<std::int64_t> wide(l.results());
  if (op == ReduceOp::Prod) {
    cpu::dispatch_apart(k::ProdI32{}, src, l.outer, l.n, l.inner, wide.data());
  } else {
    cpu::dispatch_apart(k::SumI32{}, src, l.outer, l.n, l.inner, wide.data());
  }
  if (op == ReduceOp::Mean) {
    for (auto& v : wide) v = floor_div(v, static_cast<std::int64_t>(l.n));
  }
  narrow_int(name, wide, out, x.shape());
  return out;
}

/// Values and indices of the max (min) along dim.
std::pair<CpuTensor, CpuTensor> arg_extremum(const CpuTensor& x, std::int64_t dim, bool is_max,
                                             const char* name) {
  const std::size_t d = cpu::ops::check_arg_extremum(name, is_max, x.dtype(), x.shape(), dim);
  const Layout l = around(x.shape(), d);
  const Shape out_shape = keep_dim(x.shape(), d);
  CpuTensor values(out_shape, x.dtype());
  CpuTensor indices(out_shape, DType::I32);
  if (l.results() == 0) return {values, indices};
  std::int32_t* idx = indices.data<std::int32_t>();
  if (x.dtype() == DType::F32) {
    if (is_max) {
      cpu::dispatch_apart(k::ArgMaxF32{}, x.data<float>(), l.outer, l.n, l.inner,
                          values.data<float>(), idx);
    } else {
      cpu::dispatch_apart(k::ArgMinF32{}, x.data<float>(), l.outer, l.n, l.inner,
                          values.data<float>(), idx);
    }
  } else {
    const std::int32_t* src = x.data<std::int32_t>();
    std::int32_t* v = values.data<std::int32_t>();
    if (is_max) {
      cpu::dispatch_apart(k::ArgMaxI32{}, src, l.outer, l.n, l.inner, v, idx);
    } else {
      cpu::dispatch_apart(k::ArgMinI32{}, src, l.outer, l.n, l.inner, v, idx);
    }
  }
  return {values, indices};
}

}  // namespace

CpuTensor CpuOps::reduce(ReduceOp op, const CpuTensor& x) {
  return run_reduce(op, x, whole(x), Shape{1}, cpu::ops::reduce_op_name(op, false), std::nullopt);
}

CpuTensor CpuOps::reduce_dim(ReduceOp op, const CpuTensor& x, std::int64_t dim) {
  const char* name = cpu::ops::reduce_op_name(op, true);
  const auto d = static_cast<std::size_t>(check::dim(name, dim, x.shape().rank()));
  return run_reduce(op, x, around(x.shape(), d), keep_dim(x.shape(), d), name, d);
}

std::pair<CpuTensor, CpuTensor> CpuOps::max_dim_with_indices(const CpuTensor& x,
                                                             std::int64_t dim) {
  return arg_extremum(x, dim, true, "max_dim_with_indices");
}

std::pair<CpuTensor, CpuTensor> CpuOps::min_dim_with_indices(const CpuTensor& x,
                                                             std::int64_t dim) {
  return arg_extremum(x, dim, false, "min_dim_with_indices");
}

CpuTensor CpuOps::argmax(const CpuTensor& x, std::int64_t dim) {
  return arg_extremum(x, dim, true, "argmax").second;
}

CpuTensor CpuOps::argmin(const CpuTensor& x, std::int64_t dim) {
  return arg_extremum(x, dim, false, "argmin").second;
}

std::pair<CpuTensor, CpuTensor> CpuOps::var_mean(const CpuTensor& x, std::int64_t dim,
                                                 bool unbiased) {
  const std::size_t d = cpu::ops::check_var_mean(x.dtype(), x.shape(), dim);
  const Layout l = around(x.shape(), d);
  const Shape out_shape = keep_dim(x.shape(), d);
  CpuTensor var(out_shape, DType::F32);
  CpuTensor mean(out_shape, DType::F32);
  if (l.results() == 0) return {var, mean};
  // Unbiased with n = 1: 0 / 0 = nan (PyTorch's result, with its warning).
  const double divisor = static_cast<double>(l.n) - (unbiased ? 1.0 : 0.0);
  cpu::dispatch(k::VarMeanF32{}, x.data<float>(), l.outer, l.n, l.inner, divisor,
                var.data<float>(), mean.data<float>());
  return {var, mean};
}

}  // namespace kiln
