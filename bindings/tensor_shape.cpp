// Shape and indexing ops of the JS Tensor: reshape, permute, expand, repeat, flip, slice,
// sliceAssign, cat, select, selectAssign, gather, scatter, oneHot. The JS layer builds the
// derived ops (flatten, squeeze, unsqueeze, swapDims, transpose, narrow, stack, chunk...)
// on these.
#include <emscripten/bind.h>

#include <optional>
#include <vector>

#include "js_tensor.hpp"

using emscripten::val;

namespace kiln_js {
namespace {

using kiln::CpuOps;
using kiln::DType;
using Ops = AD::FloatOps;

std::int64_t dim_arg(double dim, const char* op) {
  if (std::abs(dim) > 1e15 || std::floor(dim) != dim) {
    throw kiln::IndexError(kiln::str_cat(op, ": dim ", dim, " is out of range"));
  }
  return static_cast<std::int64_t>(dim);
}

/// Maps dim in [-rank, rank) to [0, rank), naming op.
std::int64_t norm_dim(double dim, std::size_t rank, const char* op) {
  return kiln::check::dim(op, dim_arg(dim, op), rank);
}

JsTensor reshape(const JsTensor& x, val dims) {
  return guarded([&] {
    const std::vector<std::int64_t> d = ints_from_js(dims, "reshape", "shape");
    if (x.is_float()) return JsTensor(Ops::reshape(op_input(x), d));
    return JsTensor(CpuOps::reshape(x.primitive(), d));
  });
}

JsTensor permute(const JsTensor& x, val axes) {
  return guarded([&] {
    const std::vector<std::int64_t> a = ints_from_js(axes, "permute", "axes");
    const std::size_t rank = x.shape().rank();
    if (a.size() != rank) {
      throw kiln::RankError(kiln::str_cat("permute: expected ", rank, " axes for shape ",
                                          x.shape(), ", got ", a.size()));
    }
    std::vector<std::int64_t> norm(rank);
    std::vector<bool> seen(rank, false);
    for (std::size_t i = 0; i < rank; ++i) {
      norm[i] = kiln::check::dim("permute", a[i], rank);
      if (seen[static_cast<std::size_t>(norm[i])]) {
        throw kiln::IndexError(kiln::str_cat("permute: dim ", a[i], " appears twice in the axes"));
      }
      seen[static_cast<std::size_t>(norm[i])] = true;
    }
    if (x.is_float()) return JsTensor(Ops::permute(op_input(x), norm));
    return JsTensor(CpuOps::permute(x.primitive(), norm));
  });
}

JsTensor expand(const JsTensor& x, val dims) {
  return guarded([&] {
    const std::vector<std::int64_t> d = ints_from_js(dims, "expand", "shape");
    if (x.is_float()) return JsTensor(Ops::expand(op_input(x), d));
    return JsTensor(CpuOps::expand(x.primitive(), d));
  });
}

JsTensor repeat_dim(const JsTensor& x, double dim, double times) {
  return guarded([&] {
    const std::int64_t d = norm_dim(dim, x.shape().rank(), "repeatDim");
    if (!(times >= 0) || std::floor(times) != times || times > 2147483647.0) {
      throw kiln::ValueError(kiln::str_cat("repeatDim: times must be an integer >= 0, got ", times));
    }
    const auto t = static_cast<std::int64_t>(times);
    if (x.is_float()) return JsTensor(Ops::repeat_dim(op_input(x), d, t));
    return JsTensor(CpuOps::repeat_dim(x.primitive(), d, t));
  });
}

JsTensor flip(const JsTensor& x, val dims) {
  return guarded([&] {
    const std::vector<std::int64_t> raw = ints_from_js(dims, "flip", "dims");
    std::vector<std::int64_t> d;
    for (auto v : raw) d.push_back(kiln::check::dim("flip", v, x.shape().rank()));
    if (x.is_float()) return JsTensor(Ops::flip(op_input(x), d));
    return JsTensor(CpuOps::flip(x.primitive(), d));
  });
}

/// ranges: a JS array of [start, end | null, step] (the JS layer normalises the forms).
std::vector<kiln::Slice> slices_from_js(const val& ranges, const char* op) {
  if (!val::global("Array").call<bool>("isArray", ranges)) {
    throw kiln::TypeError(kiln::str_cat(op, ": ranges must be an array"));
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
    return JsTensor(CpuOps::slice(x.primitive(), s));
  });
}

JsTensor slice_assign(const JsTensor& x, val ranges, const JsTensor& values) {
  return guarded([&] {
    const std::vector<kiln::Slice> s = slices_from_js(ranges, "sliceAssign");
    if (x.dtype() != values.dtype()) {
      throw kiln::DTypeError(kiln::str_cat("sliceAssign: values must have the dtype of the "
                                           "tensor, ", js_dtype_name(x.dtype()), ", got ",
                                           js_dtype_name(values.dtype())));
    }
    if (x.is_float()) return JsTensor(Ops::slice_assign(op_input(x), s, op_input(values)));
    return JsTensor(CpuOps::slice_assign(x.primitive(), s, values.primitive()));
  });
}

/// tensors: a JS array of RawTensor (at least one, same dtype and rank).
JsTensor cat(val tensors, double dim) {
  return guarded([&] {
    const auto n = tensors["length"].as<std::size_t>();
    if (n == 0) throw kiln::ValueError("cat: expected at least one tensor, got none");
    std::vector<JsTensor> list;
    list.reserve(n);
    for (std::size_t i = 0; i < n; ++i) list.push_back(tensors[i].as<JsTensor>());
    const JsTensor& first = list.front();
    for (std::size_t i = 1; i < n; ++i) {
      if (list[i].dtype() != first.dtype()) {
        throw kiln::DTypeError(kiln::str_cat("cat: tensor ", i, " is ",
                                             js_dtype_name(list[i].dtype()), ", tensor 0 is ",
                                             js_dtype_name(first.dtype())));
      }
      if (list[i].shape().rank() != first.shape().rank()) {
        throw kiln::RankError(kiln::str_cat("cat: tensor ", i, " has shape ", list[i].shape(),
                                            ", tensor 0 has shape ", first.shape(),
                                            " (ranks differ)"));
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
    return JsTensor(CpuOps::cat(prims, d));
  });
}

JsTensor select(const JsTensor& x, double dim, const JsTensor& indices) {
  return guarded([&] {
    check_dtype("select", indices, DType::I32);
    const std::int64_t d = dim_arg(dim, "select");
    if (x.is_float()) return JsTensor(Ops::select(op_input(x), d, indices.primitive()));
    return JsTensor(CpuOps::select(x.primitive(), d, indices.primitive()));
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
    return JsTensor(CpuOps::select_assign(x.primitive(), d, indices.primitive(), values.primitive()));
  });
}

JsTensor gather(const JsTensor& x, double dim, const JsTensor& indices) {
  return guarded([&] {
    check_dtype("gather", indices, DType::I32);
    if (indices.shape().rank() != x.shape().rank()) {
      throw kiln::RankError(kiln::str_cat("gather: indices must have the rank of the tensor, ",
                                          x.shape().rank(), ", got shape ", indices.shape()));
    }
    const std::int64_t d = dim_arg(dim, "gather");
    if (x.is_float()) return JsTensor(Ops::gather(op_input(x), d, indices.primitive()));
    return JsTensor(CpuOps::gather(x.primitive(), d, indices.primitive()));
  });
}

JsTensor scatter(const JsTensor& x, double dim, const JsTensor& indices, const JsTensor& values) {
  return guarded([&] {
    check_dtype("scatter", indices, DType::I32);
    check_dtype("scatter", values, x.dtype());
    if (indices.shape().rank() != x.shape().rank() || values.shape().rank() != x.shape().rank()) {
      throw kiln::RankError(kiln::str_cat("scatter: indices and values must have the rank of "
                                          "the tensor, ", x.shape().rank(), ", got shapes ",
                                          indices.shape(), " and ", values.shape()));
    }
    const std::int64_t d = dim_arg(dim, "scatter");
    if (x.is_float()) {
      return JsTensor(Ops::scatter(op_input(x), d, indices.primitive(), op_input(values)));
    }
    return JsTensor(CpuOps::scatter(x.primitive(), d, indices.primitive(), values.primitive()));
  });
}

JsTensor one_hot(const JsTensor& x, double num_classes) {
  return guarded([&] {
    if (!(num_classes >= 0) || std::floor(num_classes) != num_classes ||
        num_classes > 2147483647.0) {
      throw kiln::ValueError(
          kiln::str_cat("oneHot: numClasses must be an integer >= 0, got ", num_classes));
    }
    const auto n = static_cast<std::int64_t>(num_classes);
    if (x.is_float()) return JsTensor(Ops::one_hot(op_input(x), n));
    return JsTensor(CpuOps::one_hot(x.primitive(), n));
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
}
