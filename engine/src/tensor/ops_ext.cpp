// The ops of kiln/tensor/ops_ext.hpp: norm, var/std with a correction, amax/amin, pad,
// tril/triu, cumsum, linspace and einsum, on the primitives of Autodiff<B> and B. Ops built
// from primitives get their gradients from them; amax/amin, norm and cumsum record one node
// with PyTorch's backward formula (FunctionsManual.cpp, v1.13).
//
// Written once for any backend and instantiated (end of file) for KILN_OPS_EXT_BACKEND:
// Cpu here, Wgpu where engine/src/wgpu/ops_ext.cpp includes this file. The one part a backend
// brings itself is cumsum's loop over lines, `cumsum_lines` (declared before this file's
// templates: the Cpu loop below, the Wgpu kernel in wgpu/ops_ext.cpp).
#ifndef KILN_OPS_EXT_BACKEND
#define KILN_OPS_EXT_BACKEND Cpu
#define KILN_OPS_EXT_CPU 1
#endif
#include "kiln/tensor/ops_ext.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "autodiff/rule.hpp"
#include "kiln/core/check.hpp"
#include "kiln/core/checked.hpp"
#include "kiln/cpu/allocation.hpp"

namespace kiln::ops {
namespace {

// The backend these definitions are instantiated for (one per translation unit).
using B = KILN_OPS_EXT_BACKEND;
using AdT = AutodiffTensor<B>;
using AdOps = AutodiffOps<B>;
using M = autodiff::detail::Math<B>;
using P = B::FloatTensor;  // every dtype: Cpu and Wgpu have one primitive
using O = B::FloatOps;
using Sink = autodiff::GradSink<B>;
static_assert(std::is_same_v<B::IntTensor, P> && std::is_same_v<B::BoolTensor, P>);

// ---- dims ----

/// The reduced dims of `shape` in [0, rank), sorted, every dim when `dims` is empty.
/// Throws IndexError for a dim out of range or listed twice.
std::vector<std::int64_t> reduced_dims(const Shape& shape, std::span<const std::int64_t> dims,
                                       const char* op) {
  std::vector<std::int64_t> out;
  if (dims.empty()) {
    for (std::size_t i = 0; i < shape.rank(); ++i) out.push_back(static_cast<std::int64_t>(i));
    return out;
  }
  for (const std::int64_t d : dims) {
    const std::int64_t n = check::dim(op, d, shape.rank());
    if (std::find(out.begin(), out.end(), n) != out.end()) {
      throw_error<IndexError>(op, ": dim ", d, " appears more than once in the dims");
    }
    out.push_back(n);
  }
  std::sort(out.begin(), out.end());
  return out;
}

/// The shape with the reduced dims set to 1.
Shape kept_shape(const Shape& shape, const std::vector<std::int64_t>& dims) {
  std::vector<std::int64_t> s = shape.to_vector();
  for (const std::int64_t d : dims) s[static_cast<std::size_t>(d)] = 1;
  return Shape(s);
}

/// The result's shape: kept dims as 1, or removed ([1] when nothing is left: Kiln's rule
/// for whole-tensor reductions).
Shape result_shape(const Shape& shape, const std::vector<std::int64_t>& dims, bool keepdim) {
  if (keepdim) return kept_shape(shape, dims);
  std::vector<std::int64_t> s;
  for (std::size_t i = 0; i < shape.rank(); ++i) {
    if (std::find(dims.begin(), dims.end(), static_cast<std::int64_t>(i)) == dims.end()) {
      s.push_back(shape[i]);
    }
  }
  if (s.empty()) s.push_back(1);
  return Shape(s);
}

/// Number of elements over the reduced dims.
std::int64_t reduced_count(const Shape& shape, const std::vector<std::int64_t>& dims) {
  std::int64_t n = 1;
  for (const std::int64_t d : dims) n *= shape[static_cast<std::size_t>(d)];
  return n;
}

/// A rank-0 tensor seen as [1] (every reduction of Kiln works on rank >= 1).
template <class O, class T>
T at_least_1d(const T& x) {
  if (O::shape(x).rank() > 0) return x;
  const std::array<std::int64_t, 1> one{1};
  return O::reshape(x, one);
}

template <class O, class T>
T reshape_to(T x, const Shape& shape) {
  return O::reshape(std::move(x), shape.dims());
}

/// Reduces `op` over `dims` (sorted, in range) of x keeping them (shape kept_shape).
P reduce_kept(ReduceOp op, P x, const std::vector<std::int64_t>& dims) {
  for (const std::int64_t d : dims) x = O::reduce_dim(op, x, d);
  return x;
}

DType dtype_of(const P& t) { return t.dtype(); }
DType dtype_of(const AdT&) { return DType::F32; }

void check_numeric(const char* op, DType dtype) {
  if (dtype == DType::Bool) {
    throw_error<DTypeError>(op, ": expected a float32 or int32 tensor, got bool");
  }
}

// ---- amax / amin ----

P amax_forward(const P& x, const std::vector<std::int64_t>& dims, bool min, const char* op) {
  for (const std::int64_t d : dims) {
    if (O::shape(x)[static_cast<std::size_t>(d)] == 0) {
      throw_error<ValueError>(op, ": cannot reduce dim ", d, " of size 0 of shape ", O::shape(x),
                              " (the ", min ? "minimum" : "maximum",
                              " of no elements is undefined)");
    }
  }
  return reduce_kept(min ? ReduceOp::Min : ReduceOp::Max, x, dims);
}

// ---- norm ----

/// |x|^p summed over dims (kept), and the norm (kept) for the finite p's.
P norm_forward(const P& x, double p, const std::vector<std::int64_t>& dims) {
  P a = O::unary(UnaryOp::Abs, x);
  if (std::isinf(p)) return reduce_kept(p > 0 ? ReduceOp::Max : ReduceOp::Min, a, dims);
  if (p == 0) return reduce_kept(ReduceOp::Sum, M::to_float(M::cmp_s(CompareOp::NotEqual, a, 0.0)), dims);
  if (p == 1) return reduce_kept(ReduceOp::Sum, a, dims);
  if (p == 2) return O::unary(UnaryOp::Sqrt, reduce_kept(ReduceOp::Sum, M::mul(a, a), dims));
  P s = reduce_kept(ReduceOp::Sum, O::binary_scalar(BinaryOp::Pow, a, p), dims);
  return O::binary_scalar(BinaryOp::Pow, s, 1.0 / p);
}

/// PyTorch's norm_backward (v1.13) with grad and norm of the kept shape.
P norm_backward(const P& x, double p, const std::vector<std::int64_t>& dims, P g, const P& norm) {
  const Shape xs = O::shape(x);
  if (p == 0) return M::zeros(xs, x);
  const P sgn = O::unary(UnaryOp::Sign, x);
  if (p == 1) return M::mul(sgn, M::expand_to(g, xs));
  if (p == 2) {
    // grad * (x / norm).masked_fill_(norm == 0, 0)
    P q = M::zero_where(M::div(x, M::expand_to(norm, xs)),
                        M::expand_to(M::cmp_s(CompareOp::Equal, norm, 0.0), xs));
    return M::mul(M::expand_to(g, xs), std::move(q));
  }
  const P a = O::unary(UnaryOp::Abs, x);
  if (std::isinf(p)) {
    // sgn(x) * ((grad / mask.sum(dim, keepdim)) * mask), mask = |x| == norm or |x| is nan
    P mask = M::to_float(M::bor(M::cmp(CompareOp::Equal, a, M::expand_to(norm, xs)),
                                O::is_nan(a)));
    P count = reduce_kept(ReduceOp::Sum, mask, dims);
    P spread = M::expand_to(M::div(std::move(g), std::move(count)), xs);
    return M::mul(sgn, M::mul(std::move(spread), std::move(mask)));
  }
  if (p < 1) {
    // sgn(x) * |x|^(p-1) (0 where x == 0) * grad * norm^(1-p)
    P scaled = M::zero_where(O::binary_scalar(BinaryOp::Pow, a, p - 1),
                             M::cmp_s(CompareOp::Equal, x, 0.0));
    scaled = M::mul(sgn, std::move(scaled));
    P scale = M::mul(std::move(g), O::binary_scalar(BinaryOp::Pow, norm, 1 - p));
    return M::mul(std::move(scaled), M::expand_to(scale, xs));
  }
  // 1 < p < 2: sgn(x)·|x|^(p-1); p > 2: x·|x|^(p-2); times grad / norm^(p-1), 0 where norm = 0
  P scaled = p < 2 ? M::mul(sgn, O::binary_scalar(BinaryOp::Pow, a, p - 1))
                   : M::mul(x, O::binary_scalar(BinaryOp::Pow, a, p - 2));
  P scale = M::div(std::move(g), O::binary_scalar(BinaryOp::Pow, norm, p - 1));
  scale = M::zero_where(std::move(scale), M::cmp_s(CompareOp::Equal, norm, 0.0));
  return M::mul(std::move(scaled), M::expand_to(scale, xs));
}

// ---- pad ----

struct PadPair {
  std::int64_t dim;
  std::int64_t left;
  std::int64_t right;
};

enum class PadMode { Constant, Reflect, Replicate, Circular };

PadMode pad_mode(std::string_view mode, const char* op) {
  if (mode == "constant") return PadMode::Constant;
  if (mode == "reflect") return PadMode::Reflect;
  if (mode == "replicate") return PadMode::Replicate;
  if (mode == "circular") return PadMode::Circular;
  throw_error<ValueError>(
      op, ": mode must be 'constant', 'reflect', 'replicate' or 'circular', got '", mode, "'");
}

/// Validated pairs, last dim first.
std::vector<PadPair> pad_pairs(const Shape& shape, std::span<const std::int64_t> pads,
                               PadMode mode, const char* op) {
  if (pads.size() % 2 != 0) {
    throw_error<ValueError>(op, ": the pad list must have an even length ([left, right] per dim, ",
                            "last dim first), got ", pads.size(), " entries");
  }
  if (pads.size() / 2 > shape.rank()) {
    throw_error<ValueError>(op, ": the pad list has ", pads.size(), " entries (", pads.size() / 2,
                            " dims) but the tensor has shape ", shape, " (rank ", shape.rank(),
                            ")");
  }
  std::vector<PadPair> out;
  for (std::size_t i = 0; i < pads.size() / 2; ++i) {
    const auto d = static_cast<std::int64_t>(shape.rank() - 1 - i);
    const std::int64_t n = shape[static_cast<std::size_t>(d)];
    const std::int64_t l = pads[2 * i], r = pads[2 * i + 1];
    const std::int64_t size = checked::add(op, checked::add(op, n, l, "size + left pad"), r, "size + left pad + right pad");
    if (size < 0) {
      throw_error<ValueError>(op, ": pads (", l, ", ", r, ") of dim ", d, " of size ", n,
                              " give a negative size ", size);
    }
    if (mode != PadMode::Constant && (l != 0 || r != 0)) {
      if (n == 0) {
        throw_error<ValueError>(op, ": cannot pad the empty dim ", d, " of shape ", shape,
                                " in a mode other than 'constant'");
      }
      if (mode == PadMode::Reflect && (l >= n || r >= n)) {
        throw_error<ValueError>(op, ": reflect pads (", l, ", ", r, ") must be smaller than dim ",
                                d, "'s size ", n);
      }
      if (mode == PadMode::Circular && (l > n || r > n)) {
        throw_error<ValueError>(op, ": circular pads (", l, ", ", r, ") must be at most dim ", d,
                                "'s size ", n);
      }
    }
    out.push_back(PadPair{d, l, r});
  }
  return out;
}

/// The source index along the dim of each output position (reflect, replicate, circular).
P pad_indices(std::int64_t n, std::int64_t l, std::int64_t r, PadMode mode) {
  const std::int64_t size = n + l + r;
  std::vector<std::int32_t> out(static_cast<std::size_t>(size));
  for (std::int64_t o = 0; o < size; ++o) {
    std::int64_t i = o - l;
    if (mode == PadMode::Replicate) {
      i = std::clamp<std::int64_t>(i, 0, n - 1);
    } else if (mode == PadMode::Reflect) {
      if (i < 0) i = -i;
      if (i > n - 1) i = 2 * (n - 1) - i;
    } else {
      i = ((i % n) + n) % n;
    }
    out[static_cast<std::size_t>(o)] = static_cast<std::int32_t>(i);
  }
  return O::from_data(TensorData(Shape{size}, std::move(out)), DType::I32, {});
}

template <class Ops, class T>
T pad_impl(const T& x, std::span<const std::int64_t> pads, std::string_view mode_name,
           double value, const char* op) {
  const PadMode mode = pad_mode(mode_name, op);
  const std::vector<PadPair> pairs = pad_pairs(Ops::shape(x), pads, mode, op);
  // The result's size, checked (named by the op) before anything is allocated.
  std::vector<std::int64_t> final_dims = Ops::shape(x).to_vector();
  for (const PadPair& pp : pairs) {
    final_dims[static_cast<std::size_t>(pp.dim)] += pp.left + pp.right;
  }
  cpu::check_allocation(op, Shape(final_dims), dtype_of(x));
  T y = x;
  for (const PadPair& pp : pairs) {
    if (pp.left == 0 && pp.right == 0) continue;
    const Shape s = Ops::shape(y);
    const auto du = static_cast<std::size_t>(pp.dim);
    const std::int64_t n = s[du];
    if (mode != PadMode::Constant) {
      y = Ops::select(y, pp.dim, pad_indices(n, pp.left, pp.right, mode));
      continue;
    }
    // Crop first (negative pads), then add the constant blocks.
    const std::int64_t lo = std::max<std::int64_t>(0, -pp.left);
    const std::int64_t hi = n - std::max<std::int64_t>(0, -pp.right);
    if (lo != 0 || hi != n) {
      std::vector<Slice> ranges(du + 1);
      ranges.back() = Slice(lo, hi);
      y = Ops::slice(y, ranges);
    }
    std::vector<T> parts;
    std::vector<std::int64_t> block = Ops::shape(y).to_vector();
    const DType dtype = dtype_of(y);
    if (pp.left > 0) {
      block[du] = pp.left;
      parts.push_back(Ops::full(Shape(block), value, dtype, {}));
    }
    parts.push_back(y);
    if (pp.right > 0) {
      block[du] = pp.right;
      parts.push_back(Ops::full(Shape(block), value, dtype, {}));
    }
    if (parts.size() > 1) y = Ops::cat(parts, pp.dim);
  }
  return y;
}

// ---- tril / triu ----

/// Bool [rows, cols]: true where the element is zeroed.
P triangle_mask(const Shape& xs, std::int64_t diagonal, bool upper, const char* op) {
  if (xs.rank() < 2) {
    throw_error<RankError>(op, ": expected a tensor of rank >= 2 (a matrix or a batch of ",
                           "matrices), got shape ", xs, " (rank ", xs.rank(), ")");
  }
  const std::int64_t rows = xs[xs.rank() - 2], cols = xs[xs.rank() - 1];
  std::vector<bool> m(static_cast<std::size_t>(rows * cols));
  for (std::int64_t i = 0; i < rows; ++i) {
    for (std::int64_t j = 0; j < cols; ++j) {
      // tril keeps j - i <= diagonal; triu keeps j - i >= diagonal.
      const bool keep = upper ? (j - i >= diagonal) : (j - i <= diagonal);
      m[static_cast<std::size_t>(i * cols + j)] = !keep;
    }
  }
  return O::from_data(TensorData(Shape{rows, cols}, std::move(m)), DType::Bool, {});
}

// ---- cumsum ----

template <class T>
T add_wrapping(T a, T b) {
  if constexpr (std::is_same_v<T, std::int32_t>) {
    // wraps as i32 (computed unsigned: no signed overflow)
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(a) + static_cast<std::uint32_t>(b));
  } else {
    return a + b;
  }
}

/// Row by row along the summed dim, the `inner` contiguous elements of a row at a time (the
/// innermost loop walks memory in order).
template <class T>
void cumsum_loop(const T* in, T* out, std::int64_t outer, std::int64_t n, std::int64_t inner,
                 bool reverse) {
  for (std::int64_t o = 0; o < outer; ++o) {
    for (std::int64_t t = 0; t < n; ++t) {
      const std::int64_t i = reverse ? n - 1 - t : t;
      const T* src = in + (o * n + i) * inner;
      T* dst = out + (o * n + i) * inner;
      if (t == 0) {
        for (std::int64_t k = 0; k < inner; ++k) dst[k] = src[k];
      } else {
        const T* prev = out + (o * n + (reverse ? i + 1 : i - 1)) * inner;
        for (std::int64_t k = 0; k < inner; ++k) dst[k] = add_wrapping(prev[k], src[k]);
      }
    }
  }
}

#if defined(KILN_OPS_EXT_CPU)
/// Cumulative sum along d (in range) of a float32 or int32 tensor, from the end when
/// `reverse`: the Cpu backend's loop (Wgpu's: engine/src/wgpu/ops_ext.cpp).
CpuTensor cumsum_lines(const CpuTensor& x, std::int64_t d, bool reverse) {
  const Shape& s = x.shape();
  std::int64_t outer = 1, inner = 1;
  for (std::int64_t i = 0; i < d; ++i) outer *= s[static_cast<std::size_t>(i)];
  for (std::size_t i = static_cast<std::size_t>(d) + 1; i < s.rank(); ++i) inner *= s[i];
  const std::int64_t n = s[static_cast<std::size_t>(d)];
  P out(s, x.dtype());
  if (x.num_elements() == 0) return out;
  if (x.dtype() == DType::F32) {
    cumsum_loop(x.data<float>(), out.data<float>(), outer, n, inner, reverse);
  } else {
    cumsum_loop(x.data<std::int32_t>(), out.data<std::int32_t>(), outer, n, inner, reverse);
  }
  return out;
}
#endif

std::int64_t cumsum_dim(const Shape& s, std::int64_t dim, DType dtype, const char* op) {
  if (dtype == DType::Bool) {
    throw_error<DTypeError>(op, ": expected a float32 or int32 tensor, got bool (cast it first)");
  }
  return check::dim(op, dim, std::max<std::size_t>(s.rank(), 1));
}

// ---- einsum ----

struct Term {
  std::string labels;
};

[[noreturn]] void einsum_fail(const char* op, std::string_view equation, const std::string& what) {
  throw_error<ValueError>(op, ": ", what, " in the equation '", equation, "'");
}

/// Parses "ab,bc->ac" into its input terms and output (implicit output: the labels used
/// once, alphabetically, as torch.einsum).
std::pair<std::vector<std::string>, std::string> einsum_parse(std::string_view equation,
                                                              const char* op) {
  std::string eq;
  for (const char c : equation) {
    if (c != ' ') eq.push_back(c);
  }
  if (eq.find("...") != std::string::npos || eq.find('.') != std::string::npos) {
    einsum_fail(op, equation, "an ellipsis ('...') is not supported");
  }
  std::string lhs = eq, out;
  bool explicit_out = false;
  if (const auto arrow = eq.find("->"); arrow != std::string::npos) {
    lhs = eq.substr(0, arrow);
    out = eq.substr(arrow + 2);
    explicit_out = true;
    if (out.find("->") != std::string::npos || out.find('-') != std::string::npos ||
        out.find('>') != std::string::npos) {
      einsum_fail(op, equation, "more than one '->'");
    }
  }
  std::vector<std::string> terms(1);
  for (const char c : lhs) {
    if (c == ',') {
      terms.emplace_back();
    } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
      terms.back().push_back(c);
    } else {
      einsum_fail(op, equation, str_cat("unexpected character '", std::string(1, c),
                                        "' (labels are letters a-z, A-Z)"));
    }
  }
  for (const char c : out) {
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) {
      einsum_fail(op, equation, str_cat("unexpected character '", std::string(1, c),
                                        "' in the output (labels are letters a-z, A-Z)"));
    }
  }
  for (const auto& t : terms) {
    for (std::size_t i = 0; i < t.size(); ++i) {
      if (t.find(t[i], i + 1) != std::string::npos) {
        einsum_fail(op, equation, str_cat("label '", std::string(1, t[i]),
                                          "' repeats within the operand '", t,
                                          "' (diagonals are not supported)"));
      }
    }
  }
  if (explicit_out) {
    for (std::size_t i = 0; i < out.size(); ++i) {
      if (out.find(out[i], i + 1) != std::string::npos) {
        einsum_fail(op, equation, str_cat("output label '", std::string(1, out[i]), "' repeats"));
      }
      bool found = false;
      for (const auto& t : terms) found = found || t.find(out[i]) != std::string::npos;
      if (!found) {
        einsum_fail(op, equation, str_cat("output label '", std::string(1, out[i]),
                                          "' is in no operand"));
      }
    }
  } else {
    std::string all;
    for (const auto& t : terms) all += t;
    std::string once;
    for (const char c : all) {
      if (std::count(all.begin(), all.end(), c) == 1) once.push_back(c);
    }
    std::sort(once.begin(), once.end());
    out = once;
  }
  return {terms, out};
}

/// Sums x (labels `labels`) over the labels not in `keep`; returns the remaining labels.
AdT sum_labels(AdT x, std::string& labels, const std::string& keep) {
  for (std::size_t i = labels.size(); i-- > 0;) {
    if (keep.find(labels[i]) == std::string::npos) {
      x = AdOps::reduce_dim(ReduceOp::Sum, x, static_cast<std::int64_t>(i));
      std::vector<std::int64_t> s = AdOps::shape(x).to_vector();
      s.erase(s.begin() + static_cast<std::ptrdiff_t>(i));
      x = AdOps::reshape(std::move(x), s);
      labels.erase(i, 1);
    }
  }
  return x;
}

/// Permutes x (labels `from`) to the label order `to` (same letters).
AdT permute_labels(const AdT& x, const std::string& from, const std::string& to) {
  if (from == to) return x;
  std::vector<std::int64_t> axes;
  for (const char c : to) axes.push_back(static_cast<std::int64_t>(from.find(c)));
  return AdOps::permute(x, axes);
}

/// What a reduction over dims does to a shape (rank >= 1).
struct Plan {
  std::vector<std::int64_t> dims;  ///< sorted, in [0, rank)
  Shape kept;                      ///< reduced dims as 1
  Shape out;                       ///< the result's shape
};

Plan plan(const Shape& xs, std::span<const std::int64_t> dims_arg, bool keepdim, const char* op) {
  Plan p;
  p.dims = reduced_dims(xs, dims_arg, op);
  p.kept = kept_shape(xs, p.dims);
  p.out = result_shape(xs, p.dims, keepdim);
  return p;
}

}  // namespace

// ---- public functions: templates defined for B only (static_assert), instantiated below ----

template <Backend Be>
AutodiffTensor<Be> amax(const AutodiffTensor<Be>& x0, std::span<const std::int64_t> dims_arg,
                        bool keepdim, bool min, const char* op) {
  static_assert(std::is_same_v<Be, B>);
  const AdT x = at_least_1d<AdOps>(x0);
  const Plan pl = plan(AdOps::shape(x), dims_arg, keepdim, op);
  P y = amax_forward(x.primitive, pl.dims, min, op);
  if (!x.node) return AdT(O::reshape(std::move(y), pl.out.dims()));
  return autodiff::detail::record<B>(
      O::reshape(y, pl.out.dims()), {x.node},
      [xv = x.primitive, y, kept = pl.kept, dims = pl.dims](P g, Sink& s) {
        const Shape xshape = O::shape(xv);
        auto mask = M::bor(M::cmp(CompareOp::Equal, xv, M::expand_to(y, xshape)),
                           M::band(O::is_nan(xv), M::expand_to(O::is_nan(y), xshape)));
        P count = reduce_kept(ReduceOp::Sum, M::to_float(mask), dims);
        P gk = O::reshape(std::move(g), kept.dims());
        // masked_fill, not a product: an inf upstream gradient must not become inf·0 = nan.
        P spread = M::expand_to(M::div(std::move(gk), std::move(count)), xshape);
        s.add(0, M::zero_where(std::move(spread), M::bnot(std::move(mask))));
      });
}

template <class Pe>
Pe amax(const Pe& x0, std::span<const std::int64_t> dims_arg, bool keepdim, bool min,
        const char* op) {
  static_assert(std::is_same_v<Pe, P>);
  check_numeric(op, x0.dtype());
  const P x = at_least_1d<O>(x0);
  const Plan pl = plan(O::shape(x), dims_arg, keepdim, op);
  return O::reshape(amax_forward(x, pl.dims, min, op), pl.out.dims());
}

template <Backend Be>
AutodiffTensor<Be> norm(const AutodiffTensor<Be>& x0, double p, std::span<const std::int64_t> dims_arg,
                        bool keepdim, const char* op) {
  static_assert(std::is_same_v<Be, B>);
  if (std::isnan(p))
    throw_error<ValueError>(op, ": p must not be nan (a real number, Infinity or -Infinity)");
  const AdT x = at_least_1d<AdOps>(x0);
  const Plan pl = plan(AdOps::shape(x), dims_arg, keepdim, op);
  if (std::isinf(p)) {
    for (const std::int64_t d : pl.dims) {
      if (AdOps::shape(x)[static_cast<std::size_t>(d)] == 0) {
        throw_error<ValueError>(op, ": the norm with p = ", p, " of dim ", d,
                                " of size 0 of shape ", AdOps::shape(x),
                                " is undefined (the operation has no identity, as torch)");
      }
    }
  }
  P y = norm_forward(x.primitive, p, pl.dims);
  if (!x.node) return AdT(O::reshape(std::move(y), pl.out.dims()));
  return autodiff::detail::record<B>(
      O::reshape(y, pl.out.dims()), {x.node},
      [xv = x.primitive, y, p, kept = pl.kept, dims = pl.dims](P g, Sink& s) {
        s.add(0, norm_backward(xv, p, dims, O::reshape(std::move(g), kept.dims()), y));
      });
}

template <Backend Be>
AutodiffTensor<Be> var(const AutodiffTensor<Be>& x0, std::span<const std::int64_t> dims_arg,
                       double correction, bool keepdim, bool take_sqrt, const char* op) {
  static_assert(std::is_same_v<Be, B>);
  if (!std::isfinite(correction) || correction < 0) {
    throw_error<ValueError>(op, ": correction must be a finite number >= 0, got ", correction);
  }
  const AdT x = at_least_1d<AdOps>(x0);
  const Shape xs = AdOps::shape(x);
  const Plan pl = plan(xs, dims_arg, keepdim, op);
  // Move the reduced dims last and flatten them: var_mean along that one dim (biased).
  std::vector<std::int64_t> axes, flat;
  for (std::size_t i = 0; i < xs.rank(); ++i) {
    if (std::find(pl.dims.begin(), pl.dims.end(), static_cast<std::int64_t>(i)) == pl.dims.end()) {
      axes.push_back(static_cast<std::int64_t>(i));
      flat.push_back(xs[i]);
    }
  }
  for (const std::int64_t d : pl.dims) axes.push_back(d);
  const std::int64_t n = reduced_count(xs, pl.dims);
  flat.push_back(n);
  AdT t = AdOps::reshape(AdOps::permute(x, axes), flat);
  AdT v = AdOps::var_mean(t, -1, false).first;  // sum((x - mean)^2) / n
  // · n / max(0, n - correction), as torch (a divisor <= 0 gives inf, or nan for 0/0)
  const double divisor = std::max(0.0, static_cast<double>(n) - correction);
  v = AdOps::binary_scalar(BinaryOp::Div,
                           AdOps::binary_scalar(BinaryOp::Mul, std::move(v), static_cast<double>(n)),
                           divisor);
  if (take_sqrt) {
    // std's gradient is 0 where std is 0 (torch's std_backward masks it): take the root of 1
    // there, so that the masked branch carries no inf.
    const P zero = O::compare_scalar(CompareOp::Equal, v.primitive, 0.0);
    v = AdOps::mask_fill(AdOps::unary(UnaryOp::Sqrt, AdOps::mask_fill(std::move(v), zero, 1.0)),
                         zero, 0.0);
  }
  return AdOps::reshape(std::move(v), pl.out.dims());
}

template <Backend Be>
AutodiffTensor<Be> pad(const AutodiffTensor<Be>& x, std::span<const std::int64_t> pads,
                       std::string_view mode, double value, const char* op) {
  static_assert(std::is_same_v<Be, B>);
  return pad_impl<AdOps>(x, pads, mode, value, op);
}

template <class Pe>
Pe pad(const Pe& x, std::span<const std::int64_t> pads, std::string_view mode, double value,
       const char* op) {
  static_assert(std::is_same_v<Pe, P>);
  return pad_impl<O>(x, pads, mode, value, op);
}

template <Backend Be>
AutodiffTensor<Be> triangle(const AutodiffTensor<Be>& x, std::int64_t diagonal, bool upper,
                            const char* op) {
  static_assert(std::is_same_v<Be, B>);
  const P mask = triangle_mask(AdOps::shape(x), diagonal, upper, op);
  return AdOps::mask_fill(x, mask, 0.0);
}

template <class Pe>
Pe triangle(const Pe& x, std::int64_t diagonal, bool upper, const char* op) {
  static_assert(std::is_same_v<Pe, P>);
  const P mask = triangle_mask(O::shape(x), diagonal, upper, op);
  return O::mask_fill(x, mask, 0.0);
}

template <class Pe>
Pe cumsum(const Pe& x0, std::int64_t dim, const char* op) {
  static_assert(std::is_same_v<Pe, P>);
  const std::int64_t d = cumsum_dim(O::shape(x0), dim, x0.dtype(), op);
  const P x = at_least_1d<O>(x0);
  return O::reshape(cumsum_lines(x, d, false), O::shape(x0).dims());
}

template <Backend Be>
AutodiffTensor<Be> cumsum(const AutodiffTensor<Be>& x, std::int64_t dim, const char* op) {
  static_assert(std::is_same_v<Be, B>);
  const Shape xs = AdOps::shape(x);
  const std::int64_t d = cumsum_dim(xs, dim, DType::F32, op);
  P y = cumsum<P>(x.primitive, dim, op);
  if (!x.node) return AdT(std::move(y));
  // d/dx_i sum_{j >= i} g_j: the cumulative sum of g from the end.
  return autodiff::detail::record<B>(std::move(y), {x.node}, [xs, d](P g, Sink& s) {
    const P g1 = at_least_1d<O>(g);
    s.add(0, O::reshape(cumsum_lines(g1, d, true), xs.dims()));
  });
}

template <class Pe>
Pe linspace(double start, double end, std::int64_t steps, const char* op) {
  static_assert(std::is_same_v<Pe, P>);
  if (steps < 0) throw_error<ValueError>(op, ": steps must be >= 0, got ", steps);
  if (!std::isfinite(start) || !std::isfinite(end)) {
    throw_error<ValueError>(op, ": start and end must be finite, got ", start, " and ", end);
  }
  checked::elements(op, steps, "steps");
  cpu::check_allocation(op, Shape{steps}, DType::F32);
  std::vector<float> o(static_cast<std::size_t>(steps));
  // ATen's linspace kernel for float: step in float, the first half counted from start and
  // the second from end.
  const auto s = static_cast<float>(start);
  const auto e = static_cast<float>(end);
  if (steps == 1) {
    o[0] = s;
  } else if (steps > 1) {
    const float step = (e - s) / static_cast<float>(steps - 1);
    const std::int64_t halfway = steps / 2;
    for (std::int64_t i = 0; i < steps; ++i) {
      o[static_cast<std::size_t>(i)] = i < halfway ? s + step * static_cast<float>(i)
                                                   : e - step * static_cast<float>(steps - i - 1);
    }
  }
  return O::from_data(TensorData(Shape{steps}, std::move(o)), DType::F32, {});
}

template <Backend Be>
AutodiffTensor<Be> einsum(std::string_view equation,
                          std::span<const AutodiffTensor<std::type_identity_t<Be>>> operands,
                          const char* op) {
  static_assert(std::is_same_v<Be, B>);
  auto [terms, out] = einsum_parse(equation, op);
  if (terms.size() > 2) {
    einsum_fail(op, equation, str_cat("only one or two operands are supported, got ", terms.size()));
  }
  if (terms.size() != operands.size()) {
    einsum_fail(op, equation, str_cat("the equation has ", terms.size(), " operand(s) but ",
                                      operands.size(), " tensor(s) were given"));
  }
  // Label sizes, checked across operands.
  std::array<std::int64_t, 128> size{};
  size.fill(-1);
  for (std::size_t k = 0; k < terms.size(); ++k) {
    const Shape s = AdOps::shape(operands[k]);
    if (s.rank() != terms[k].size()) {
      throw_error<ShapeError>(op, ": operand ", k, " has shape ", s, " (rank ", s.rank(),
                              ") but its term '", terms[k], "' has ", terms[k].size(),
                              " label(s), in the equation '", equation, "'");
    }
    for (std::size_t i = 0; i < terms[k].size(); ++i) {
      auto& sz = size[static_cast<unsigned char>(terms[k][i])];
      if (sz >= 0 && sz != s[i]) {
        throw_error<ShapeError>(op, ": label '", std::string(1, terms[k][i]), "' has size ", sz,
                                " and ", s[i], " (operand ", k, " has shape ", s,
                                "), in the equation '", equation, "'");
      }
      sz = s[i];
    }
  }
  if (terms.size() == 1) {
    std::string labels = terms[0];
    AdT x = sum_labels(operands[0], labels, out);
    x = permute_labels(x, labels, out);
    if (out.empty()) x = AdOps::reshape(std::move(x), std::vector<std::int64_t>{});
    return x;
  }
  std::string la = terms[0], lb = terms[1];
  // Labels of one operand only and not in the output: summed away first.
  AdT a = sum_labels(operands[0], la, out + lb);
  AdT b = sum_labels(operands[1], lb, out + la);
  std::string batch, left, right, contracted;
  for (const char c : la) {
    const bool in_b = lb.find(c) != std::string::npos, in_out = out.find(c) != std::string::npos;
    if (in_b && in_out) {
      batch.push_back(c);
    } else if (in_b) {
      contracted.push_back(c);
    } else {
      left.push_back(c);
    }
  }
  for (const char c : lb) {
    if (la.find(c) == std::string::npos) right.push_back(c);
  }
  auto product = [&](const std::string& ls) {
    std::int64_t n = 1;
    for (const char c : ls) n = checked::mul(op, n, size[static_cast<unsigned char>(c)], "the product of the label sizes");
    return n;
  };
  const std::int64_t nb = product(batch), nm = product(left), nk = product(contracted),
                     nn = product(right);
  a = AdOps::reshape(permute_labels(a, la, batch + left + contracted),
                     std::vector<std::int64_t>{nb, nm, nk});
  b = AdOps::reshape(permute_labels(b, lb, batch + contracted + right),
                     std::vector<std::int64_t>{nb, nk, nn});
  AdT c = AdOps::matmul(a, b);  // [nb, nm, nn]
  const std::string labels = batch + left + right;
  std::vector<std::int64_t> dims;
  for (const char ch : labels) dims.push_back(size[static_cast<unsigned char>(ch)]);
  c = AdOps::reshape(std::move(c), dims);
  return permute_labels(c, labels, out);
}

// ---- the instantiations for B ----

using Dims = std::span<const std::int64_t>;
template AdT amax<B>(const AdT&, Dims, bool, bool, const char*);
template P amax<P>(const P&, Dims, bool, bool, const char*);
template AdT norm<B>(const AdT&, double, Dims, bool, const char*);
template AdT var<B>(const AdT&, Dims, double, bool, bool, const char*);
template AdT pad<B>(const AdT&, Dims, std::string_view, double, const char*);
template P pad<P>(const P&, Dims, std::string_view, double, const char*);
template AdT triangle<B>(const AdT&, std::int64_t, bool, const char*);
template P triangle<P>(const P&, std::int64_t, bool, const char*);
template AdT cumsum<B>(const AdT&, std::int64_t, const char*);
template P cumsum<P>(const P&, std::int64_t, const char*);
template P linspace<P>(double, double, std::int64_t, const char*);
template AdT einsum<B>(std::string_view, std::span<const AdT>, const char*);

}  // namespace kiln::ops
