// Shape and indexing ops of the JS Tensor: the primitives (reshape, permute, expand,
// repeatDim, flip, slice, sliceAssign, cat, select, selectAssign, gather, scatter, oneHot)
// and the derived ops (narrow, chunk, split, splitWithSizes, topk, flatten, squeeze,
// unsqueeze, swapDims, transpose, repeat, stack), whose shape logic, checks and messages
// are the engine's (kiln/tensor/derived.hpp, shared with the typed C++ Tensor): each
// derived entry point computes the plan there and applies it with the primitives here.
//
// Conventions of the derived entry points: dims, counts and sizes are JS numbers that must
// be integers (TypeError otherwise); dims may be negative (from the end). The last
// argument `op` names the op in messages (the JS method's name, e.g. "squeezeDim", or
// "squeeze" when squeeze(dim) calls it). Ops that give several tensors return a JS array
// of RawTensors, each owned by the caller.
#include <emscripten/bind.h>

#include <cmath>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "js_tensor.hpp"
#include "kiln/tensor/derived.hpp"

using emscripten::val;

namespace kiln_js {
namespace {
using kiln::DType;
using Ops = AD::FloatOps;

std::int64_t dim_arg(double dim, const char* op) {
  if (std::abs(dim) > 1e15 || std::floor(dim) != dim) {
    kiln::throw_error<kiln::IndexError>(op, ": dim ", dim, " is out of range");
  }
  return static_cast<std::int64_t>(dim);
}

/// Maps dim in [-rank, rank) to [0, rank), naming op.
std::int64_t norm_dim(double dim, std::size_t rank, const char* op) {
  return kiln::check::dim(op, dim_arg(dim, op), rank);
}

/// A JS number that must be a safe integer (a dim, a count, a size). Throws TypeError
/// `<op>: <what> must be an integer, got <value>` otherwise.
std::int64_t int_arg(double value, const char* op, const char* what) {
  if (!(std::abs(value) <= 9007199254740991.0) || std::floor(value) != value) {
    kiln::throw_error<kiln::TypeError>(op, ": ", what, " must be an integer, got ", value);
  }
  return static_cast<std::int64_t>(value);
}

// ---- the primitives applied to a JsTensor of any dtype (float: on Autodiff<Cpu>)

JsTensor reshape_of(const JsTensor& x, std::span<const std::int64_t> dims) {
  if (x.is_float()) return JsTensor(Ops::reshape(op_input(x), dims));
  return JsTensor(InnerOps::reshape(x.primitive(), dims));
}

JsTensor permute_of(const JsTensor& x, std::span<const std::int64_t> axes) {
  if (x.is_float()) return JsTensor(Ops::permute(op_input(x), axes));
  return JsTensor(InnerOps::permute(x.primitive(), axes));
}

JsTensor slice_of(const JsTensor& x, std::span<const kiln::Slice> ranges) {
  if (x.is_float()) return JsTensor(Ops::slice(op_input(x), ranges));
  return JsTensor(InnerOps::slice(x.primitive(), ranges));
}

JsTensor repeat_dim_of(const JsTensor& x, std::int64_t dim, std::int64_t times) {
  if (x.is_float()) return JsTensor(Ops::repeat_dim(op_input(x), dim, times));
  return JsTensor(InnerOps::repeat_dim(x.primitive(), dim, times));
}

/// The pieces of a split plan as a JS array of RawTensors (each owned by the caller).
val pieces_to_js(const JsTensor& x, const kiln::derived::SplitPlan& plan) {
  std::vector<JsTensor> pieces;
  pieces.reserve(plan.pieces.size());
  for (const kiln::derived::Piece piece : plan.pieces) {
    pieces.push_back(slice_of(x, kiln::derived::piece_ranges(plan.dim, piece)));
  }
  // Built after every slice succeeded, so that an error leaves no handle behind.
  val out = val::array();
  for (auto& p : pieces) out.call<void>("push", val(std::move(p)));
  return out;
}

JsTensor reshape(const JsTensor& x, val dims) {
  return guarded([&] {
    const std::vector<std::int64_t> d = ints_from_js(dims, "reshape", "shape");
    if (x.is_float()) return JsTensor(Ops::reshape(op_input(x), d));
    return JsTensor(InnerOps::reshape(x.primitive(), d));
  });
}

JsTensor permute(const JsTensor& x, val axes) {
  return guarded([&] {
    const std::vector<std::int64_t> a = ints_from_js(axes, "permute", "axes");
    return permute_of(x, kiln::derived::permute_axes(x.shape(), a, "permute"));
  });
}

JsTensor expand(const JsTensor& x, val dims) {
  return guarded([&] {
    const std::vector<std::int64_t> d = ints_from_js(dims, "expand", "shape");
    if (x.is_float()) return JsTensor(Ops::expand(op_input(x), d));
    return JsTensor(InnerOps::expand(x.primitive(), d));
  });
}

JsTensor repeat_dim(const JsTensor& x, double dim, double times) {
  return guarded([&] {
    const std::int64_t d = norm_dim(dim, x.shape().rank(), "repeatDim");
    if (!(times >= 0) || std::floor(times) != times || times > 2147483647.0) {
      // Whole numbers printed in full (2^40 as 1099511627776, not 1.09951e+12).
      const bool whole = std::floor(times) == times && std::abs(times) < 9.0e15;
      kiln::throw_error<kiln::ValueError>(
          "repeatDim: times must be an integer in [0, 2147483647], got ",
          whole ? kiln::str_cat(static_cast<std::int64_t>(times)) : kiln::str_cat(times));
    }
    const auto t = static_cast<std::int64_t>(times);
    if (x.is_float()) return JsTensor(Ops::repeat_dim(op_input(x), d, t));
    return JsTensor(InnerOps::repeat_dim(x.primitive(), d, t));
  });
}

JsTensor flip(const JsTensor& x, val dims) {
  return guarded([&] {
    const std::vector<std::int64_t> d =
        kiln::derived::flip_dims(x.shape(), ints_from_js(dims, "flip", "dims"), "flip");
    if (x.is_float()) return JsTensor(Ops::flip(op_input(x), d));
    return JsTensor(InnerOps::flip(x.primitive(), d));
  });
}

/// ranges: a JS array of [start, end | null, step] (the JS layer normalises the forms).
std::vector<kiln::Slice> slices_from_js(const val& ranges, const char* op) {
  if (!val::global("Array").call<bool>("isArray", ranges)) {
    kiln::throw_error<kiln::TypeError>(op, ": ranges must be an array");
  }
  const auto n = ranges["length"].as<std::size_t>();
  std::vector<kiln::Slice> out;
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const val r = ranges[i];
    const std::int64_t start = int_from_js(r[0], op, "range start");
    const std::int64_t step = int_from_js(r[2], op, "range step");
    const val end = r[1];
    if (end.isNull() || end.isUndefined()) {
      out.push_back(kiln::Slice::from(start, step));
    } else {
      out.emplace_back(start, int_from_js(end, op, "range end"), step);
    }
  }
  return out;
}

JsTensor slice(const JsTensor& x, val ranges) {
  return guarded([&] {
    const std::vector<kiln::Slice> s = slices_from_js(ranges, "slice");
    if (x.is_float()) return JsTensor(Ops::slice(op_input(x), s));
    return JsTensor(InnerOps::slice(x.primitive(), s));
  });
}

JsTensor slice_assign(const JsTensor& x, val ranges, const JsTensor& values) {
  return guarded([&] {
    const std::vector<kiln::Slice> s = slices_from_js(ranges, "sliceAssign");
    if (x.dtype() != values.dtype()) {
      kiln::throw_error<kiln::DTypeError>(
          "sliceAssign: values must have the dtype of the "
          "tensor, ",
          js_dtype_name(x.dtype()), ", got ", js_dtype_name(values.dtype()));
    }
    if (x.is_float()) return JsTensor(Ops::slice_assign(op_input(x), s, op_input(values)));
    return JsTensor(InnerOps::slice_assign(x.primitive(), s, values.primitive()));
  });
}

/// tensors: a JS array of RawTensor (at least one, same dtype and rank).
JsTensor cat(val tensors, double dim) {
  return guarded([&] {
    const auto n = tensors["length"].as<std::size_t>();
    if (n == 0) kiln::throw_error<kiln::ValueError>("cat: expected at least one tensor, got none");
    std::vector<JsTensor> list;
    list.reserve(n);
    for (std::size_t i = 0; i < n; ++i) list.push_back(tensors[i].as<JsTensor>());
    const JsTensor& first = list.front();
    for (std::size_t i = 1; i < n; ++i) {
      if (list[i].dtype() != first.dtype()) {
        kiln::throw_error<kiln::DTypeError>("cat: tensor ", i, " is ",
                                            js_dtype_name(list[i].dtype()), ", tensor 0 is ",
                                            js_dtype_name(first.dtype()));
      }
      if (list[i].shape().rank() != first.shape().rank()) {
        kiln::throw_error<kiln::RankError>("cat: tensor ", i, " has shape ", list[i].shape(),
                                           ", tensor 0 has shape ", first.shape(),
                                           " (ranks differ)");
      }
    }
    const std::int64_t d = norm_dim(dim, first.shape().rank(), "cat");
    if (first.is_float()) {
      std::vector<FloatPrim> prims;
      for (const auto& t : list) prims.push_back(op_input(t));
      return JsTensor(Ops::cat(prims, d));
    }
    std::vector<Prim> prims;
    for (const auto& t : list) prims.push_back(t.primitive());
    return JsTensor(InnerOps::cat(prims, d));
  });
}

JsTensor select(const JsTensor& x, double dim, const JsTensor& indices) {
  return guarded([&] {
    check_dtype("select", indices, DType::I32);
    const std::int64_t d = dim_arg(dim, "select");
    if (x.is_float()) return JsTensor(Ops::select(op_input(x), d, indices.primitive()));
    return JsTensor(InnerOps::select(x.primitive(), d, indices.primitive()));
  });
}

JsTensor select_assign(const JsTensor& x, double dim, const JsTensor& indices,
                       const JsTensor& values) {
  return guarded([&] {
    check_dtype("selectAssign", indices, DType::I32);
    check_dtype("selectAssign", values, x.dtype());
    const std::int64_t d = dim_arg(dim, "selectAssign");
    if (x.is_float()) {
      return JsTensor(Ops::select_assign(op_input(x), d, indices.primitive(), op_input(values)));
    }
    return JsTensor(InnerOps::select_assign(x.primitive(), d, indices.primitive(), values.primitive()));
  });
}

JsTensor gather(const JsTensor& x, double dim, const JsTensor& indices) {
  return guarded([&] {
    check_dtype("gather", indices, DType::I32);
    if (indices.shape().rank() != x.shape().rank()) {
      kiln::throw_error<kiln::RankError>("gather: indices must have the rank of the tensor, ",
                                         x.shape().rank(), ", got shape ", indices.shape());
    }
    const std::int64_t d = dim_arg(dim, "gather");
    if (x.is_float()) return JsTensor(Ops::gather(op_input(x), d, indices.primitive()));
    return JsTensor(InnerOps::gather(x.primitive(), d, indices.primitive()));
  });
}

JsTensor scatter(const JsTensor& x, double dim, const JsTensor& indices, const JsTensor& values) {
  return guarded([&] {
    check_dtype("scatter", indices, DType::I32);
    check_dtype("scatter", values, x.dtype());
    if (indices.shape().rank() != x.shape().rank() || values.shape().rank() != x.shape().rank()) {
      kiln::throw_error<kiln::RankError>(
          "scatter: indices and values must have the rank of "
          "the tensor, ",
          x.shape().rank(), ", got shapes ", indices.shape(), " and ", values.shape());
    }
    const std::int64_t d = dim_arg(dim, "scatter");
    if (x.is_float()) {
      return JsTensor(Ops::scatter(op_input(x), d, indices.primitive(), op_input(values)));
    }
    return JsTensor(InnerOps::scatter(x.primitive(), d, indices.primitive(), values.primitive()));
  });
}

JsTensor one_hot(const JsTensor& x, double num_classes) {
  return guarded([&] {
    if (!(num_classes >= 0) || std::floor(num_classes) != num_classes ||
        num_classes > 2147483647.0) {
      kiln::throw_error<kiln::ValueError>("oneHot: numClasses must be an integer >= 0, got ",
                                          num_classes);
    }
    const auto n = static_cast<std::int64_t>(num_classes);
    if (x.is_float()) return JsTensor(Ops::one_hot(op_input(x), n));
    return JsTensor(InnerOps::one_hot(x.primitive(), n));
  });
}

// ---- derived ops: plan in kiln::derived, primitives here

JsTensor narrow(const JsTensor& x, double dim, double start, double length, std::string op) {
  return guarded([&] {
    const char* o = op.c_str();
    return slice_of(x, kiln::derived::narrow_ranges_from_end(x.shape(), int_arg(dim, o, "dim"),
                                                    int_arg(start, o, "start"),
                                                    int_arg(length, o, "length"), o));
  });
}

val chunk(const JsTensor& x, double chunks, double dim, std::string op) {
  return guarded([&] {
    const char* o = op.c_str();
    return pieces_to_js(x, kiln::derived::chunk_plan(x.shape(), int_arg(chunks, o, "chunks"),
                                                     int_arg(dim, o, "dim"), o));
  });
}

val split(const JsTensor& x, double split_size, double dim, std::string op) {
  return guarded([&] {
    const char* o = op.c_str();
    return pieces_to_js(x, kiln::derived::split_plan(x.shape(), int_arg(split_size, o, "splitSize"),
                                                     int_arg(dim, o, "dim"), o));
  });
}

val split_with_sizes(const JsTensor& x, val sizes, double dim, std::string op) {
  return guarded([&] {
    const char* o = op.c_str();
    const std::vector<std::int64_t> s = ints_from_js(sizes, o, "sizes");
    return pieces_to_js(
        x, kiln::derived::split_with_sizes_plan(x.shape(), s, int_arg(dim, o, "dim"), o));
  });
}

/// (values, indices) of the k largest entries along dim (sorted descending, stable).
std::pair<JsTensor, JsTensor> topk_pair(const JsTensor& x, double k, double dim, const char* op) {
  if (x.dtype() == kiln::DType::Bool) {
    kiln::throw_error<kiln::DTypeError>(op, ": expected a float32 or int32 tensor, got bool");
  }
  const std::int64_t kk = int_arg(k, op, "k");
  const std::int64_t d = kiln::derived::topk_dim(x.shape(), kk, int_arg(dim, op, "dim"), op);
  const std::vector<kiln::Slice> first_k = kiln::derived::piece_ranges(d, {0, kk});
  if (x.is_float()) {
    auto [values, indices] = Ops::sort_with_indices(op_input(x), d, true);
    return {JsTensor(Ops::slice(values, first_k)), JsTensor(InnerOps::slice(indices, first_k))};
  }
  auto [values, indices] = InnerOps::sort_with_indices(x.primitive(), d, true);
  return {JsTensor(InnerOps::slice(values, first_k)), JsTensor(InnerOps::slice(indices, first_k))};
}

/// [values, indices] of topk, a JS array of two RawTensors.
val topk_with_indices(const JsTensor& x, double k, double dim, std::string op) {
  return guarded([&] {
    auto [values, indices] = topk_pair(x, k, dim, op.c_str());
    val out = val::array();
    out.call<void>("push", val(std::move(values)));
    out.call<void>("push", val(std::move(indices)));
    return out;
  });
}

/// The values of topk only.
JsTensor topk(const JsTensor& x, double k, double dim, std::string op) {
  return guarded([&] { return topk_pair(x, k, dim, op.c_str()).first; });
}

JsTensor flatten(const JsTensor& x, double start, double end, std::string op) {
  return guarded([&] {
    const char* o = op.c_str();
    const kiln::derived::FlattenPlan plan = kiln::derived::flatten_plan(
        x.shape(), int_arg(start, o, "start"), int_arg(end, o, "end"), o);
    return reshape_of(x, plan.shape.dims());
  });
}

/// Every size-1 dim removed.
JsTensor squeeze(const JsTensor& x) {
  return guarded([&] { return reshape_of(x, kiln::derived::squeeze_shape(x.shape()).dims()); });
}

JsTensor squeeze_dim(const JsTensor& x, double dim, std::string op) {
  return guarded([&] {
    const char* o = op.c_str();
    const kiln::Shape s = kiln::derived::squeeze_dim_shape(x.shape(), int_arg(dim, o, "dim"), o);
    return reshape_of(x, s.dims());
  });
}

JsTensor unsqueeze_dim(const JsTensor& x, double dim, std::string op) {
  return guarded([&] {
    const char* o = op.c_str();
    const kiln::Shape s = kiln::derived::unsqueeze_dim_shape(x.shape(), int_arg(dim, o, "dim"), o);
    return reshape_of(x, s.dims());
  });
}

JsTensor swap_dims(const JsTensor& x, double dim1, double dim2, std::string op) {
  return guarded([&] {
    const char* o = op.c_str();
    return permute_of(x, kiln::derived::swap_dims_axes(x.shape(), int_arg(dim1, o, "dim1"),
                                                       int_arg(dim2, o, "dim2"), o));
  });
}

JsTensor transpose(const JsTensor& x, std::string op) {
  return guarded(
      [&] { return permute_of(x, kiln::derived::transpose_axes(x.shape(), op.c_str())); });
}

JsTensor repeat(const JsTensor& x, val times, std::string op) {
  return guarded([&] {
    const char* o = op.c_str();
    const std::vector<std::int64_t> t = ints_from_js(times, o, "times");
    JsTensor out = x;  // no steps: a new handle to the same tensor, as clone()
    for (const kiln::derived::RepeatStep step : kiln::derived::repeat_plan(x.shape(), t, o)) {
      out = repeat_dim_of(out, step.dim, step.times);
    }
    return out;
  });
}

/// tensors: a JS array of RawTensors of one dtype and shape.
JsTensor stack(val tensors, double dim, std::string op) {
  return guarded([&] {
    const char* o = op.c_str();
    if (!val::global("Array").call<bool>("isArray", tensors)) {
      kiln::throw_error<kiln::TypeError>(o, ": tensors must be an array");
    }
    const auto n = tensors["length"].as<std::size_t>();
    std::vector<JsTensor> list;
    std::vector<kiln::Shape> shapes;
    list.reserve(n);
    shapes.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
      list.push_back(tensors[i].as<JsTensor>());
      shapes.push_back(list.back().shape());
    }
    const kiln::derived::StackPlan plan =
        kiln::derived::stack_plan(shapes, int_arg(dim, o, "dim"), o);
    for (std::size_t i = 1; i < n; ++i) {
      if (list[i].dtype() != list[0].dtype()) {
        kiln::throw_error<kiln::DTypeError>(o, ": tensor ", i, " is ",
                                            js_dtype_name(list[i].dtype()), ", tensor 0 is ",
                                            js_dtype_name(list[0].dtype()));
      }
    }
    if (list[0].is_float()) {
      std::vector<FloatPrim> prims;
      prims.reserve(n);
      for (const auto& t : list) prims.push_back(Ops::reshape(op_input(t), plan.unsqueezed.dims()));
      return JsTensor(Ops::cat(prims, plan.dim));
    }
    std::vector<Prim> prims;
    prims.reserve(n);
    for (const auto& t : list)
      prims.push_back(InnerOps::reshape(t.primitive(), plan.unsqueezed.dims()));
    return JsTensor(InnerOps::cat(prims, plan.dim));
  });
}

}  // namespace
}  // namespace kiln_js

EMSCRIPTEN_BINDINGS(kiln_tensor_shape) {
  using namespace kiln_js;
  using emscripten::function;
  function("tReshape", &reshape);
  function("tPermute", &permute);
  function("tExpand", &expand);
  function("tRepeatDim", &repeat_dim);
  function("tFlip", &flip);
  function("tSlice", &slice);
  function("tSliceAssign", &slice_assign);
  function("tCat", &cat);
  function("tSelect", &select);
  function("tSelectAssign", &select_assign);
  function("tGather", &gather);
  function("tScatter", &scatter);
  function("tOneHot", &one_hot);
  // derived ops (kiln/tensor/derived.hpp)
  function("tNarrow", &narrow);
  function("tChunk", &chunk);
  function("tSplit", &split);
  function("tSplitWithSizes", &split_with_sizes);
  function("tTopk", &topk);
  function("tTopkWithIndices", &topk_with_indices);
  function("tFlatten", &flatten);
  function("tSqueeze", &squeeze);
  function("tSqueezeDim", &squeeze_dim);
  function("tUnsqueezeDim", &unsqueeze_dim);
  function("tSwapDims", &swap_dims);
  function("tTranspose", &transpose);
  function("tRepeat", &repeat);
  function("tStack", &stack);
}
