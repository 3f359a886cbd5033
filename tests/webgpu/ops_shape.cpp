// Harness cases of the matmul and shape ops (engine/src/wgpu/matmul_ops.cpp, shape_ops.cpp).
#include <optional>

#include "harness.hpp"

namespace kiln::harness {
namespace {

std::vector<std::int64_t> dims_of(const json& a, const char* key) {
  return a.at(key).get<std::vector<std::int64_t>>();
}

// attrs.ranges: [[start, end | null, step?], ...] (Slice(start, end, step); null end = to the
// end of the dim; [] = the whole dim).
std::vector<Slice> ranges_of(const json& a) {
  std::vector<Slice> out;
  for (const json& r : a.at("ranges")) {
    Slice s;
    if (!r.empty()) {
      s.start = r.at(0).get<std::int64_t>();
      if (r.size() > 1 && !r.at(1).is_null()) s.end = r.at(1).get<std::int64_t>();
      if (r.size() > 2) s.step = r.at(2).get<std::int64_t>();
    }
    out.push_back(s);
  }
  return out;
}

// Inputs: lhs, rhs. attrs.self: multiply in[0] by itself (the same buffer twice).
KILN_HARNESS_OP(matmul, {
  return Ops::matmul(in[0], a.value("self", false) ? in[0] : in[1]);
});

KILN_HARNESS_OP(matmul_transposed, {
  return Ops::matmul_transposed(in[0], a.value("self", false) ? in[0] : in[1],
                                a.value("tl", false), a.value("tr", false));
});

KILN_HARNESS_OP(reshape, {
  auto dims = dims_of(a, "dims");
  return Ops::reshape(in[0], dims);
});

KILN_HARNESS_OP(permute, {
  auto axes = dims_of(a, "axes");
  return Ops::permute(in[0], axes);
});

KILN_HARNESS_OP(expand, {
  auto dims = dims_of(a, "dims");
  return Ops::expand(in[0], dims);
});

KILN_HARNESS_OP(repeat_dim, {
  return Ops::repeat_dim(in[0], a.at("dim").get<std::int64_t>(), a.at("times").get<std::int64_t>());
});

KILN_HARNESS_OP(flip, {
  auto dims = dims_of(a, "dims");
  return Ops::flip(in[0], dims);
});

KILN_HARNESS_OP(slice, {
  auto ranges = ranges_of(a);
  return Ops::slice(in[0], ranges);
});

// Inputs: x, values (attrs.self: x is its own values, one buffer).
KILN_HARNESS_OP(slice_assign, {
  auto ranges = ranges_of(a);
  return Ops::slice_assign(in[0], ranges, a.value("self", false) ? in[0] : in[1]);
});

// Every input, joined along attrs.dim (attrs.twice: in[0] twice, one buffer).
KILN_HARNESS_OP(cat, {
  if (a.value("twice", false)) {
    const std::vector<typename Ops::Tensor> two{in[0], in[0]};
    return Ops::cat(std::span<const typename Ops::Tensor>(two), a.at("dim").get<std::int64_t>());
  }
  return Ops::cat(std::span<const typename Ops::Tensor>(in.data(), in.size()), a.at("dim").get<std::int64_t>());
});

// Chains on device results (no host copy): permute then slice then flip then a matmul with
// in[1], the shapes given by attrs (axes, ranges, dims).
KILN_HARNESS_OP(chain, {
  auto axes = dims_of(a, "axes");
  auto ranges = ranges_of(a);
  auto dims = dims_of(a, "dims");
  auto t = Ops::flip(Ops::slice(Ops::permute(in[0], axes), ranges), dims);
  return Ops::matmul(t, in[1]);
});

}  // namespace
}  // namespace kiln::harness
