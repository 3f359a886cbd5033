// Element-wise ops of the Wgpu backend (kiln/wgpu/wgpu.hpp): binary ops with NumPy
// broadcasting and with scalars, unary ops, clamp, leaky_relu, softplus, comparisons,
// is_nan / is_inf, Bool logic and masked selection.
//
// Every op is one "map" dispatch: out[i] = f(operands at i), each operand read at its
// broadcast offset (a same-shape fast path reads them at i). The WGSL of f comes from the op
// table: wgsl_ops.def holds one line per row of kiln/backend/ops.def, and the helpers its
// expressions call (wgsl_math.cpp) reproduce the Cpu kernels' results. Arguments are checked
// by the Cpu backend's own check functions (cpu/ops/elementwise_common.hpp), so both backends
// throw the same errors.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "cpu/ops/elementwise_common.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"
#include "kiln/wgpu/wgpu.hpp"
#include "wgpu/runtime.hpp"
#include "wgpu/wgsl_math.hpp"

namespace kiln {
namespace {

namespace ops = cpu::ops;
using ops::op_name;

// ---- the op table's WGSL (wgsl_ops.def), checked against ops.def at compile time ----

struct WgslRow {
  std::string_view f32;  ///< expression over f32 operands
  std::string_view i32;  ///< over i32 (compare: i32 or u32) operands; empty for FLOAT rows
};

#define KILN_WGSL_BINARY(Name, f32_expr, i32_expr) \
  constexpr WgslRow kBinary##Name{f32_expr, i32_expr};
#define KILN_WGSL_UNARY(Name, f32_expr, i32_expr) \
  constexpr WgslRow kUnary##Name{f32_expr, i32_expr};
#define KILN_WGSL_COMPARE(Name, f32_expr, int_expr) \
  constexpr WgslRow kCompare##Name{f32_expr, int_expr};
#include "wgpu/wgsl_ops.def"

constexpr int kWgslBinaryRows = 0
#define KILN_WGSL_BINARY(...) +1
#include "wgpu/wgsl_ops.def"
    ;
constexpr int kWgslUnaryRows = 0
#define KILN_WGSL_UNARY(...) +1
#include "wgpu/wgsl_ops.def"
    ;
constexpr int kWgslCompareRows = 0
#define KILN_WGSL_COMPARE(...) +1
#include "wgpu/wgsl_ops.def"
    ;
static_assert(kWgslBinaryRows == binary_op_count,
              "wgpu/wgsl_ops.def: one KILN_WGSL_BINARY row per KILN_BINARY_OP row of ops.def");
static_assert(kWgslUnaryRows == unary_op_count,
              "wgpu/wgsl_ops.def: one KILN_WGSL_UNARY row per KILN_UNARY_OP row of ops.def");
static_assert(kWgslCompareRows == compare_op_count,
              "wgpu/wgsl_ops.def: one KILN_WGSL_COMPARE row per KILN_COMPARE_OP row of ops.def");
// An i32 form exactly for the NUMERIC unary rows (a missing kUnary<Name> fails here too).
#define KILN_WGSL_IS_NUMERIC_NUMERIC true
#define KILN_WGSL_IS_NUMERIC_FLOAT false
#define KILN_UNARY_OP(Name, snake, jsMethod, KINDS, ...)                   \
  static_assert(KILN_WGSL_IS_NUMERIC_##KINDS == !kUnary##Name.i32.empty(), \
                "wgpu/wgsl_ops.def: the i32 expression of " #Name " (\"\" for FLOAT rows)");
#include "kiln/backend/ops.def"
#undef KILN_WGSL_IS_NUMERIC_NUMERIC
#undef KILN_WGSL_IS_NUMERIC_FLOAT

const WgslRow& wgsl_row(BinaryOp op) {
  switch (op) {
#define KILN_BINARY_OP(Name, ...) \
  case BinaryOp::Name:            \
    return kBinary##Name;
#include "kiln/backend/ops.def"
  }
  return kBinaryAdd;
}

const WgslRow& wgsl_row(UnaryOp op) {
  switch (op) {
#define KILN_UNARY_OP(Name, ...) \
  case UnaryOp::Name:            \
    return kUnary##Name;
#include "kiln/backend/ops.def"
  }
  return kUnaryNeg;
}

const WgslRow& wgsl_row(CompareOp op) {
  switch (op) {
#define KILN_COMPARE_OP(Name, ...) \
  case CompareOp::Name:            \
    return kCompare##Name;
#include "kiln/backend/ops.def"
  }
  return kCompareEqual;
}

// ---- the map kernel ----

// The uniform block of every map kernel (WGSL layout: 16-byte rows; 160 bytes).
const char* const kParamsWgsl = R"WGSL(
struct P {
  n: u32, rank: u32, run: u32, inner: u32,
  s0: u32, s1: u32, s2: u32, s3: u32,
  shape: array<vec4<u32>, 2>,
  st0: array<vec4<u32>, 2>,
  st1: array<vec4<u32>, 2>,
  st2: array<vec4<u32>, 2>,
}
)WGSL";

// n: output elements. Broadcast kernels walk ops::make_plan's plan: `rank` outer dims of
// sizes `shape` with per-operand strides st0..st2 (0 where broadcast), then runs of `run`
// elements along which operand k steps by 1 if bit k of `inner` is set, else by 0.
// s0..s3: scalar operands (bit patterns).
struct Params {
  std::uint32_t n = 0, rank = 0, run = 0, inner = 0;
  std::array<std::uint32_t, 4> s{};
  std::uint32_t shape[8] = {};
  std::uint32_t stride[3][8] = {};
};
static_assert(sizeof(Params) == 160, "Params is the WGSL struct P");

constexpr int kMaxOperands = 3;

std::uint32_t bits_of(float v) {
  std::uint32_t b;
  std::memcpy(&b, &v, 4);
  return b;
}
std::uint32_t bits_of(std::int32_t v) { return static_cast<std::uint32_t>(v); }

// The WGSL of a map over `noperands` operands read from `nslots` buffers (operand k from
// buffer in<slot[k]>): `body` reads v0.. (u32 bits), p.s0.. and stores out[i].
std::string map_source(int nslots, const int* slot, int noperands, bool broadcast,
                       std::string_view body) {
  std::string s(wgpu::kPrelude);
  const std::string helpers = wgpu::wgsl_helpers(body);
  s += helpers;
  s += kParamsWgsl;
  for (int k = 0; k < nslots; ++k) {
    s += str_cat("@group(0) @binding(", k, ") var<storage, read> in", k, ": array<u32>;\n");
  }
  s += str_cat("@group(0) @binding(", nslots, ") var<storage, read_write> out: array<u32>;\n");
  s += str_cat("@group(0) @binding(", nslots + 1, ") var<uniform> p: P;\n");
  s += "@compute @workgroup_size(256)\n"
       "fn main(@builtin(global_invocation_id) gid: vec3<u32>, "
       "@builtin(num_workgroups) nwg: vec3<u32>) {\n"
       "  let i = flat_index(gid, nwg, 256u);\n"
       "  if (i >= p.n) { return; }\n";
  if (helpers.find("g_zero") != std::string::npos) s += "  g_zero = gid.z;\n";  // wgsl_math.cpp
  if (broadcast) {
    // The names here (bc_*) stay clear of the body's.
    s += "  var bc_outer = i / p.run;\n"
         "  let bc_pos = i - bc_outer * p.run;\n";
    for (int k = 0; k < noperands; ++k) {
      s += str_cat("  var j", k, " = select(0u, bc_pos, (p.inner & ", 1u << k, "u) != 0u);\n");
    }
    s += "  for (var bc_d = i32(p.rank) - 1; bc_d >= 0; bc_d = bc_d - 1) {\n"
         "    let bc_size = p.shape[bc_d / 4][bc_d % 4];\n"
         "    let bc_c = bc_outer % bc_size;\n"
         "    bc_outer = bc_outer / bc_size;\n";
    for (int k = 0; k < noperands; ++k) {
      s += str_cat("    j", k, " = j", k, " + bc_c * p.st", k, "[bc_d / 4][bc_d % 4];\n");
    }
    s += "  }\n";
  } else {
    for (int k = 0; k < noperands; ++k) s += str_cat("  let j", k, " = i;\n");
  }
  for (int k = 0; k < noperands; ++k) {
    s += str_cat("  let v", k, " = in", slot[k], "[j", k, "];\n");
  }
  s += body;
  s += "}\n";
  return s;
}

/// One dispatch computing a tensor of `shape` and `dtype`: out[i] = body (see map_source)
/// with the operands broadcast to `shape` (each broadcastable to it; checked by the caller).
/// No dispatch for an empty output.
WgpuTensor map(const char* op, std::initializer_list<const WgpuTensor*> operands,
               const Shape& shape, DType dtype, std::string_view body,
               std::array<std::uint32_t, 4> scalars = {}) {
  const std::int64_t n = shape.num_elements();
  auto out = wgpu::allocate(op, static_cast<std::size_t>(n) * 4);
  if (n == 0) return WgpuTensor(shape, dtype, std::move(out));
  // A buffer is bound once, however many operands read it.
  const wgpu::Buffer* buffers[kMaxOperands + 1] = {};
  int slot[kMaxOperands] = {};
  int nslots = 0;
  int noperands = 0;
  bool broadcast = false;
  std::array<const Shape*, kMaxOperands> shapes{&shape, &shape, &shape};
  for (const WgpuTensor* t : operands) {
    const wgpu::Buffer* b = &t->buffer();
    int s = 0;
    while (s < nslots && buffers[s] != b) ++s;
    if (s == nslots) buffers[nslots++] = b;
    slot[noperands] = s;
    shapes[noperands] = &t->shape();
    broadcast = broadcast || !(t->shape() == shape);
    ++noperands;
  }
  Params p;
  p.n = static_cast<std::uint32_t>(n);
  p.s = scalars;
  if (broadcast) {
    // Missing operands are given the output's shape: contiguous, they never stop a merge.
    const auto plan = ops::make_plan<kMaxOperands>(shape, shapes);
    p.rank = static_cast<std::uint32_t>(plan.outer_rank);
    p.run = static_cast<std::uint32_t>(plan.run);
    for (int k = 0; k < kMaxOperands; ++k) p.inner |= plan.run_vector[k] ? 1u << k : 0u;
    for (std::size_t d = 0; d < plan.outer_rank; ++d) {
      p.shape[d] = static_cast<std::uint32_t>(plan.outer_shape[d]);
      for (int k = 0; k < kMaxOperands; ++k) {
        p.stride[k][d] = static_cast<std::uint32_t>(plan.outer_stride[k][d]);
      }
    }
  }
  const auto& kernel =
      wgpu::kernel(map_source(nslots, slot, noperands, broadcast, body), nslots, 1, true);
  const auto groups = wgpu::groups_for(n);
  switch (nslots) {
    case 1:
      wgpu::dispatch(kernel, {buffers[0], out.get()}, p, groups);
      break;
    case 2:
      wgpu::dispatch(kernel, {buffers[0], buffers[1], out.get()}, p, groups);
      break;
    default:
      wgpu::dispatch(kernel, {buffers[0], buffers[1], buffers[2], out.get()}, p, groups);
  }
  return WgpuTensor(shape, dtype, std::move(out));
}

// WGSL type of a dtype's values in a kernel (Bool: u32 0/1).
const char* wgsl_type(DType dtype) {
  return dtype == DType::F32 ? "f32" : dtype == DType::I32 ? "i32" : "u32";
}

// `let <name> = <v as dtype's WGSL type>;`
std::string let(const char* name, std::string_view v, DType dtype) {
  if (dtype == DType::Bool) return str_cat("  let ", name, " = ", v, ";\n");
  return str_cat("  let ", name, " = bitcast<", wgsl_type(dtype), ">(", v, ");\n");
}

// `out[i] = <expr of dtype>;`
std::string store(std::string_view expr, DType dtype) {
  if (dtype == DType::Bool) return str_cat("  out[i] = select(0u, 1u, ", expr, ");\n");
  return str_cat("  out[i] = bitcast<u32>(", expr, ");\n");
}

/// The host copy of an i32 tensor's values, or null when it has none.
const std::int32_t* host_i32(const WgpuTensor& t) {
  if (!t.host()) return nullptr;
  return reinterpret_cast<const std::int32_t*>(t.host()->bytes.data());
}

}  // namespace

WgpuTensor WgpuOps::binary(BinaryOp op, WgpuTensor lhs, WgpuTensor rhs) {
  const DType dtype = lhs.dtype();
  const char* name = op_name(op, dtype);
  wgpu::check(name);
  ops::check_binary(op, dtype, rhs.dtype());
  const Shape shape = ops::broadcast_shapes(name, {{"lhs", &lhs.shape()}, {"rhs", &rhs.shape()}});
  // The divisor / exponent check reads values: run when the host copy is at hand; without
  // it the kernel gives the Cpu kernel's values (0 for a zero divisor or negative exponent).
  if (dtype == DType::I32 && shape.num_elements() > 0) {
    if (const std::int32_t* r = host_i32(rhs))
      ops::check_int_rhs(op, r, rhs.num_elements(), rhs.shape());
  }
  const WgslRow& row = wgsl_row(op);
  const std::string body = let("a", "v0", dtype) + let("b", "v1", dtype) +
                           store(dtype == DType::F32 ? row.f32 : row.i32, dtype);
  return map(name, {&lhs, &rhs}, shape, dtype, body);
}

WgpuTensor WgpuOps::binary_scalar(BinaryOp op, WgpuTensor lhs, double scalar, bool scalar_on_left) {
  const DType dtype = lhs.dtype();
  const char* name = op_name(op, dtype);
  wgpu::check(name);
  ops::check_binary_scalar(op, dtype);
  std::uint32_t s = 0;
  if (dtype == DType::F32) {
    const float f = static_cast<float>(scalar);
    if (op == BinaryOp::Pow && !scalar_on_left && (f == 1.f || f == 2.f)) {
      // pow(x, 1) = x and pow(x, 2) = x·x, as the Cpu backend (its fast paths).
      if (f == 1.f) return lhs;
      return map(name, {&lhs}, lhs.shape(), dtype,
                 let("a", "v0", dtype) + store("f_mul(a, a)", dtype));
    }
    s = bits_of(f);
  } else {
    const std::int32_t v = ops::int_scalar(name, scalar);
    if (lhs.num_elements() > 0) {
      if (!scalar_on_left) {
        ops::check_int_scalar_rhs(op, v);
      } else if (const std::int32_t* x = host_i32(lhs)) {
        ops::check_int_rhs(op, x, lhs.num_elements(), lhs.shape());
      }
    }
    s = bits_of(v);
  }
  const WgslRow& row = wgsl_row(op);
  const std::string body = let(scalar_on_left ? "b" : "a", "v0", dtype) +
                           let(scalar_on_left ? "a" : "b", "p.s0", dtype) +
                           store(dtype == DType::F32 ? row.f32 : row.i32, dtype);
  return map(name, {&lhs}, lhs.shape(), dtype, body, {s});
}

WgpuTensor WgpuOps::unary(UnaryOp op, WgpuTensor x) {
  const char* name = op_name(op);
  wgpu::check(name);
  const DType dtype = x.dtype();
  ops::check_unary(op, dtype);
  const WgslRow& row = wgsl_row(op);
  return map(name, {&x}, x.shape(), dtype,
             let("x", "v0", dtype) + store(dtype == DType::F32 ? row.f32 : row.i32, dtype));
}

WgpuTensor WgpuOps::clamp(WgpuTensor x, std::optional<double> min, std::optional<double> max) {
  wgpu::check("clamp");
  const DType dtype = x.dtype();
  ops::check_clamp(dtype, min, max);
  std::uint32_t lo_bits, hi_bits;
  std::string body = let("x", "v0", dtype) + let("lo", "p.s0", dtype) + let("hi", "p.s1", dtype);
  if (dtype == DType::F32) {
    constexpr float kInf = std::numeric_limits<float>::infinity();
    lo_bits = bits_of(min ? static_cast<float>(*min) : -kInf);
    hi_bits = bits_of(max ? static_cast<float>(*max) : kInf);
    // As ClampF32: r = x < lo ? lo : x, then r > hi ? hi : r (nan stays nan).
    body += "  let r = select(x, lo, f_lt(x, lo));\n" + store("select(r, hi, f_lt(hi, r))", dtype);
  } else {
    // As CpuOps::clamp: integer bounds rounded inward, then saturated to the i32 range.
    constexpr double kMin = std::numeric_limits<std::int32_t>::min();
    constexpr double kMax = std::numeric_limits<std::int32_t>::max();
    const double lo = min ? std::clamp(std::ceil(*min), kMin, kMax) : kMin;
    const double hi = max ? std::clamp(std::floor(*max), kMin, kMax) : kMax;
    lo_bits = bits_of(static_cast<std::int32_t>(lo));
    hi_bits = bits_of(static_cast<std::int32_t>(hi));
    body += store("min(max(x, lo), hi)", dtype);
  }
  return map("clamp", {&x}, x.shape(), dtype, body, {lo_bits, hi_bits});
}

WgpuTensor WgpuOps::leaky_relu(WgpuTensor x, double negative_slope) {
  wgpu::check("leaky_relu");
  ops::check_leaky_relu(x.dtype(), negative_slope);
  // As LeakyReluF32: x > 0 ? x : x·slope.
  const std::string body = let("x", "v0", DType::F32) + let("slope", "p.s0", DType::F32) +
                           store("select(f_mul(x, slope), x, f_lt(0.0, x))", DType::F32);
  return map("leaky_relu", {&x}, x.shape(), DType::F32, body,
             {bits_of(static_cast<float>(negative_slope))});
}

WgpuTensor WgpuOps::softplus(WgpuTensor x, double beta, double threshold) {
  wgpu::check("softplus");
  ops::check_softplus(x.dtype(), beta, threshold);
  // As SoftplusF32: bx = x·beta; bx > threshold ? x : (max(bx, 0) + log1p(exp(-|bx|))) / beta.
  const std::string body =
      let("x", "v0", DType::F32) + let("beta", "p.s0", DType::F32) +
      let("threshold", "p.s1", DType::F32) +
      "  let bx = f_mul(x, beta);\n"
      "  let soft = (max(bx, 0.0) + f_log1p(f_exp(f_neg(f_abs(bx))))) / beta;\n" +
      store("select(soft, x, f_lt(threshold, bx))", DType::F32);
  return map("softplus", {&x}, x.shape(), DType::F32, body,
             {bits_of(static_cast<float>(beta)), bits_of(static_cast<float>(threshold))});
}

WgpuTensor WgpuOps::compare(CompareOp op, const WgpuTensor& lhs, const WgpuTensor& rhs) {
  const char* name = op_name(op);
  wgpu::check(name);
  const DType dtype = lhs.dtype();
  ops::check_same_dtype(name, "lhs", dtype, "rhs", rhs.dtype());
  const Shape shape = ops::broadcast_shapes(name, {{"lhs", &lhs.shape()}, {"rhs", &rhs.shape()}});
  const WgslRow& row = wgsl_row(op);
  const std::string body = let("a", "v0", dtype) + let("b", "v1", dtype) +
                           store(dtype == DType::F32 ? row.f32 : row.i32, DType::Bool);
  return map(name, {&lhs, &rhs}, shape, DType::Bool, body);
}

WgpuTensor WgpuOps::compare_scalar(CompareOp op, const WgpuTensor& lhs, double scalar) {
  const char* name = op_name(op);
  wgpu::check(name);
  const DType dtype = lhs.dtype();
  std::uint32_t s = 0;
  if (dtype == DType::F32) {
    s = bits_of(static_cast<float>(scalar));  // as PyTorch: the scalar rounded to f32
  } else {
    // The Cpu compares i32 (and 0/1 Bool) elements with the scalar exactly (in double).
    // As an i32 comparison: a nan scalar, or == / != with a scalar no i32 equals, give one
    // answer for every element; x < 2.5 is x <= 2, x >= 2.5 is x > 2; past the i32 range
    // every x is below (above) the scalar.
    constexpr double kMin = std::numeric_limits<std::int32_t>::min();
    constexpr double kMax = std::numeric_limits<std::int32_t>::max();
    const bool exact = scalar == std::floor(scalar) && scalar >= kMin && scalar <= kMax;
    if (!exact) {
      const bool is_eq = op == CompareOp::Equal || op == CompareOp::NotEqual;
      const bool lower = op == CompareOp::Lower || op == CompareOp::LowerEqual;
      std::optional<bool> constant;
      if (std::isnan(scalar) || is_eq) {
        constant = op == CompareOp::NotEqual;
      } else if (scalar > kMax) {
        constant = lower;
      } else if (scalar < kMin) {
        constant = !lower;
      }
      if (constant) return full(lhs.shape(), *constant ? 1.0 : 0.0, DType::Bool, {});
      op = lower ? CompareOp::LowerEqual : CompareOp::Greater;
      scalar = std::floor(scalar);
    }
    const auto v = static_cast<std::int32_t>(scalar);
    // Bool elements are 0/1: compared as i32 (a negative scalar must stay below them).
    s = bits_of(v);
  }
  const WgslRow& row = wgsl_row(op);
  const DType as = dtype == DType::F32 ? DType::F32 : DType::I32;
  const std::string body = (dtype == DType::Bool ? "  let a = i32(v0);\n" : let("a", "v0", as)) +
                           let("b", "p.s0", as) +
                           store(as == DType::F32 ? row.f32 : row.i32, DType::Bool);
  return map(name, {&lhs}, lhs.shape(), DType::Bool, body, {s});
}

WgpuTensor WgpuOps::is_nan(const WgpuTensor& x) {
  wgpu::check("is_nan");
  if (x.dtype() != DType::F32)
    return full(x.shape(), 0.0, DType::Bool, {});  // integers are never nan
  return map("is_nan", {&x}, x.shape(), DType::Bool,
             store("is_nan_f32(bitcast<f32>(v0))", DType::Bool));
}

WgpuTensor WgpuOps::is_inf(const WgpuTensor& x) {
  wgpu::check("is_inf");
  if (x.dtype() != DType::F32) return full(x.shape(), 0.0, DType::Bool, {});
  return map("is_inf", {&x}, x.shape(), DType::Bool,
             store("is_inf_f32(bitcast<f32>(v0))", DType::Bool));
}

WgpuTensor WgpuOps::bool_not(WgpuTensor x) {
  wgpu::check("bool_not");
  ops::require_bool("bool_not", "the input", x.dtype());
  return map("bool_not", {&x}, x.shape(), DType::Bool, "  out[i] = v0 ^ 1u;\n");
}

namespace {

WgpuTensor bool_logic(const char* name, const char* wgsl_op, const WgpuTensor& lhs,
                      const WgpuTensor& rhs) {
  wgpu::check(name);
  ops::require_bool(name, "lhs", lhs.dtype());
  ops::require_bool(name, "rhs", rhs.dtype());
  const Shape shape = ops::broadcast_shapes(name, {{"lhs", &lhs.shape()}, {"rhs", &rhs.shape()}});
  return map(name, {&lhs, &rhs}, shape, DType::Bool, str_cat("  out[i] = v0 ", wgsl_op, " v1;\n"));
}

}  // namespace

WgpuTensor WgpuOps::bool_and(WgpuTensor lhs, WgpuTensor rhs) {
  return bool_logic("bool_and", "&", lhs, rhs);
}
WgpuTensor WgpuOps::bool_or(WgpuTensor lhs, WgpuTensor rhs) {
  return bool_logic("bool_or", "|", lhs, rhs);
}
WgpuTensor WgpuOps::bool_xor(WgpuTensor lhs, WgpuTensor rhs) {
  return bool_logic("bool_xor", "^", lhs, rhs);
}

WgpuTensor WgpuOps::mask_where(WgpuTensor x, const WgpuTensor& mask, const WgpuTensor& value) {
  wgpu::check("mask_where");
  ops::check_mask_where(x.dtype(), mask.dtype(), value.dtype());
  const Shape shape = ops::broadcast_shapes(
      "mask_where", {{"x", &x.shape()}, {"mask", &mask.shape()}, {"value", &value.shape()}});
  // The bits of the chosen element, whatever the dtype.
  return map("mask_where", {&x, &mask, &value}, shape, x.dtype(),
             "  out[i] = select(v0, v2, v1 != 0u);\n");
}

WgpuTensor WgpuOps::mask_fill(WgpuTensor x, const WgpuTensor& mask, double value) {
  wgpu::check("mask_fill");
  ops::check_mask_fill(mask.dtype());
  const Shape shape =
      ops::broadcast_shapes("mask_fill", {{"x", &x.shape()}, {"mask", &mask.shape()}});
  std::uint32_t v = 0;
  switch (x.dtype()) {
    case DType::F32:
      v = bits_of(static_cast<float>(value));
      break;
    case DType::I32:
      v = bits_of(ops::int_scalar("mask_fill", value));
      break;
    case DType::Bool:
      v = value != 0.0;
      break;
  }
  return map("mask_fill", {&x, &mask}, shape, x.dtype(), "  out[i] = select(v0, p.s0, v1 != 0u);\n",
             {v});
}

}  // namespace kiln
