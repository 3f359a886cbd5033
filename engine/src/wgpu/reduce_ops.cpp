// Reductions and sort of the Wgpu backend: reduce, reduce_dim, max/min_dim_with_indices,
// argmax, argmin, var_mean, sort_with_indices (kiln/wgpu/wgpu.hpp). Semantics and checks are
// the Cpu backend's (cpu/ops/reduce_ops.cpp, sort_ops.cpp; the checks are shared:
// cpu/ops/reduce_checks.hpp).
//
// Every reduction sees its input as [outer, n, inner] around the reduced dim (the whole
// tensor is [1, numel, 1]) and writes outer·inner results, row-major, with no permute: the
// element k of result r = o·inner + i is x[(o·n + k)·inner + i]. A reduction is a WGSL
// monoid (a state S, identity(), combine(a, b)) plus lift (an element to a state) and
// finish (a state to the outputs), and runs as:
//   n <= kSerialMax   one thread per result, a sequential loop in blocks of 16 (the block's
//                     state is combined into the total every 16 elements);
//   otherwise         one workgroup of 256 threads per (result, chunk of kChunk elements):
//                     each thread combines 16 elements (strided), then a tree in workgroup
//                     memory; more than one chunk writes partial states [results, chunks]
//                     that the next pass reduces the same way (no atomics, deterministic).
// Float sums are thus f32 pairwise-like trees: each pass adds <= 16 + 8 roundings per term
// (first-order error <= 24·u·Σ|x| per pass, u = 2^-24, and one pass up to 4096 elements,
// two up to 16M), where the Cpu sums blocked f32 -> f64 (error <= 2.9e-6·Σ|x|).
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cpu/ops/reduce_checks.hpp"
#include "kiln/core/check.hpp"
#include "kiln/cpu/cpu.hpp"
#include "kiln/wgpu/wgpu.hpp"
#include "wgpu/runtime.hpp"

namespace kiln {
namespace {

/// Rows up to this length are reduced by one thread per result.
constexpr std::uint32_t kSerialMax = 256;
/// Elements one workgroup reduces per pass (16 per thread).
constexpr std::uint32_t kChunk = 4096;

/// The input seen as [outer, n, inner] around the reduced dim.
struct Layout {
  std::uint32_t outer = 1;
  std::uint32_t n = 1;
  std::uint32_t inner = 1;
  std::uint32_t results() const { return outer * inner; }
};

Layout whole(const WgpuTensor& x) { return {1, static_cast<std::uint32_t>(x.num_elements()), 1}; }

Layout around(const Shape& s, std::size_t d) {
  Layout l;
  for (std::size_t i = 0; i < s.rank(); ++i) {
    const auto size = static_cast<std::uint32_t>(s[i]);
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

const char* wgsl_type(DType d) { return d == DType::F32 ? "f32" : d == DType::I32 ? "i32" : "u32"; }

/// The WGSL of one reduction. `state` defines S, identity(), combine(a, b) (associative and,
/// where order matters, ordered by the carried index, not by position) and
/// lift(v: XT, k: u32, r: u32) -> S (element v at position k of result r); `finish` defines
/// finish(r: u32, s: S), writing the outputs (declared by `outputs`). `extra_reads` are
/// read-only arrays lift may use.
struct Spec {
  std::string x_type;
  std::string state;
  std::size_t state_bytes = 4;
  std::vector<std::string> extra_reads;
  std::vector<std::string> outputs;
  std::string finish;
};

/// Parameters of the reduction kernels (the WGSL struct P below).
struct Params {
  std::uint32_t n;        // elements per result in this pass
  std::uint32_t inner;    // stride between consecutive elements of a result
  std::uint32_t chunk;    // elements per workgroup (tree kernel)
  std::uint32_t nchunks;  // workgroups per result (tree kernel)
  std::uint32_t total;    // results (serial) or results · nchunks (tree)
  std::uint32_t count;    // elements per result of the whole reduction (Mean's divisor)
  float aux0;             // var_mean: the variance divisor
  std::uint32_t op;       // the spec's run-time variant (Sum/Prod/Mean, Max/Min, ...)
};

const char* const kParams = R"WGSL(
struct P { n: u32, inner: u32, chunk: u32, nchunks: u32, total: u32, count: u32, aux0: f32, op: u32 }
)WGSL";

const char* const kSerialMain = R"WGSL(
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let r = flat_index(gid, nwg, 256u);
  if (r >= p.total) { return; }
  let o = r / p.inner;
  let i = r % p.inner;
  var acc = identity();
  var blk = identity();
  for (var k = 0u; k < p.n; k++) {
    blk = combine(blk, load((o * p.n + k) * p.inner + i, k, r));
    if ((k & 15u) == 15u) {
      acc = combine(acc, blk);
      blk = identity();
    }
  }
  store(r, r, combine(acc, blk));
}
)WGSL";

const char* const kTreeMain = R"WGSL(
var<workgroup> sh: array<S, 256>;
@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {
  let g = wid.x + wid.y * nwg.x;
  if (g >= p.total) { return; }
  let r = g / p.nchunks;
  let c = g % p.nchunks;
  let o = r / p.inner;
  let i = r % p.inner;
  let k0 = c * p.chunk;
  let k1 = min(p.n, k0 + p.chunk);
  var acc = identity();
  for (var k = k0 + li; k < k1; k += 256u) {
    acc = combine(acc, load((o * p.n + k) * p.inner + i, k, r));
  }
  sh[li] = acc;
  workgroupBarrier();
  for (var s = 128u; s > 0u; s >>= 1u) {
    if (li < s) { sh[li] = combine(sh[li], sh[li + s]); }
    workgroupBarrier();
  }
  if (li == 0u) { store(r, g, sh[0]); }
}
)WGSL";

/// The source of a pass: from the input x (else from partial states), to the outputs (else
/// to partial states), serial or tree. Sets the binding counts.
std::string source(const Spec& spec, bool from_x, bool to_final, bool tree, int& nread, int& nrw) {
  std::string s(wgpu::kPrelude);
  s += "alias XT = " + spec.x_type + ";\n" + spec.state + kParams;
  int b = 0;
  auto bind = [&](const char* access, const std::string& decl) {
    s += "@group(0) @binding(" + std::to_string(b++) + ") var<storage, " + access + "> " + decl +
         ";\n";
  };
  bind("read", from_x ? "src: array<XT>" : "src: array<S>");
  for (const auto& e : spec.extra_reads) bind("read", e);  // lift is compiled in every pass
  nread = b;
  if (to_final) {
    for (const auto& o : spec.outputs) bind("read_write", o);
  } else {
    bind("read_write", "dst: array<S>");
  }
  nrw = b - nread;
  s += "@group(0) @binding(" + std::to_string(b) + ") var<uniform> p: P;\n";
  s += from_x ? "fn load(idx: u32, k: u32, r: u32) -> S { return lift(src[idx], k, r); }\n"
              : "fn load(idx: u32, k: u32, r: u32) -> S { return src[idx]; }\n";
  if (to_final) {
    s += spec.finish;
    s += "fn store(r: u32, g: u32, s: S) { finish(r, s); }\n";
  } else {
    s += "fn store(r: u32, g: u32, s: S) { dst[g] = s; }\n";
  }
  s += tree ? kTreeMain : kSerialMain;
  return s;
}

/// Records one dispatch over up to 5 buffers.
void dispatch_buffers(const wgpu::Kernel& k, const std::vector<const wgpu::Buffer*>& b,
                      const Params& p, std::array<std::uint32_t, 3> groups) {
  switch (b.size()) {
    case 2: wgpu::dispatch(k, {b[0], b[1]}, p, groups); break;
    case 3: wgpu::dispatch(k, {b[0], b[1], b[2]}, p, groups); break;
    case 4: wgpu::dispatch(k, {b[0], b[1], b[2], b[3]}, p, groups); break;
    default: wgpu::dispatch(k, {b[0], b[1], b[2], b[3], b[4]}, p, groups); break;
  }
}

/// Runs the reduction `spec` of x (layout l) into `outputs` (outer·inner elements each).
/// `op` selects the spec's variant at run time (one pipeline per spec, not per variant:
/// each pipeline costs a compilation); aux0 is an extra parameter of its finish.
void run(const char* op, const Spec& spec, const wgpu::Buffer& x, const Layout& l,
         const std::vector<const wgpu::Buffer*>& extra_reads,
         const std::vector<const wgpu::Buffer*>& outputs, std::uint32_t op_code,
         float aux0 = 0.f) {
  const std::uint32_t results = l.results();
  if (results == 0) return;
  const wgpu::Buffer* src = &x;
  std::shared_ptr<wgpu::Buffer> partial;  // the last pass's partial states
  bool from_x = true;
  std::uint32_t n = l.n;
  std::uint32_t inner = l.inner;
  for (;;) {
    const bool tree = n > kSerialMax;
    const std::uint32_t nchunks = tree ? (n + kChunk - 1) / kChunk : 1;
    const bool to_final = nchunks == 1;
    int nread = 0, nrw = 0;
    const auto& k = wgpu::kernel(source(spec, from_x, to_final, tree, nread, nrw), nread, nrw, true);
    std::vector<const wgpu::Buffer*> buffers{src};
    buffers.insert(buffers.end(), extra_reads.begin(), extra_reads.end());
    std::shared_ptr<wgpu::Buffer> next;
    if (to_final) {
      buffers.insert(buffers.end(), outputs.begin(), outputs.end());
    } else {
      next = wgpu::allocate(op, static_cast<std::size_t>(results) * nchunks * spec.state_bytes);
      buffers.push_back(next.get());
    }
    const std::uint32_t total = results * nchunks;
    const Params p{n, inner, kChunk, nchunks, total, l.n, aux0, op_code};
    dispatch_buffers(k, buffers, p,
                     tree ? wgpu::groups_for(static_cast<std::int64_t>(total) * 256, 256)
                          : wgpu::groups_for(total));
    if (to_final) return;
    partial = std::move(next);
    src = partial.get();
    from_x = false;
    n = nchunks;
    inner = 1;
  }
}

// ---- the specs ----
// Run-time variants (p.op): arithmetic 0 Sum, 1 Prod, 2 Mean; extremum and arg 0 Min,
// 1 Max; Any/All bit 0 All, bit 1 f32 input.
constexpr std::uint32_t kOpSum = 0, kOpProd = 1, kOpMean = 2;

const char* const kArithF32 = R"WGSL(
alias S = f32;
fn identity() -> S { return select(0.0, 1.0, p.op == 1u); }
fn combine(a: S, b: S) -> S { return select(a + b, a * b, p.op == 1u); }
fn lift(v: XT, k: u32, r: u32) -> S { return v; }
)WGSL";

const char* const kFinishArithF32 = R"WGSL(
fn finish(r: u32, s: S) {
  if (p.op != 2u) { out0[r] = s; return; }
  out0[r] = select(s / f32(p.count), nan_f32(), p.count == 0u);
}
)WGSL";

// Int Sum and Prod wrap in i32 (two's complement), which gives the exact result whenever
// it fits in i32; when it does not, the Cpu throws LimitError, which the Wgpu op can only
// reproduce from a host copy of the input (see check_int_on_host).
const char* const kArithI32 = R"WGSL(
alias S = i32;
fn identity() -> S { return select(0, 1, p.op == 1u); }
fn combine(a: S, b: S) -> S { return select(a + b, a * b, p.op == 1u); }
fn lift(v: XT, k: u32, r: u32) -> S { return v; }
)WGSL";

// Int Mean: the exact sum as a two's complement int64 in (lo, hi), then the floor of sum / n
// (Python's //) by long division. |sum| < n·2^31 < 2^62 and the quotient lies between the
// smallest and the largest element, so it fits in i32.
const char* const kMeanI32 = R"WGSL(
alias S = vec2<u32>;
fn identity() -> S { return vec2<u32>(0u, 0u); }
fn combine(a: S, b: S) -> S {
  let lo = a.x + b.x;
  return vec2<u32>(lo, a.y + b.y + select(0u, 1u, lo < a.x));
}
fn lift(v: XT, k: u32, r: u32) -> S { return vec2<u32>(bitcast<u32>(v), select(0u, 0xffffffffu, v < 0)); }
fn floor_div(s: S, n: u32) -> i32 {
  let neg = (s.y & 0x80000000u) != 0u;
  var lo = s.x;
  var hi = s.y;
  if (neg) {
    lo = ~s.x + 1u;
    hi = ~s.y + select(0u, 1u, lo == 0u);
  }
  var rem = hi % n;
  var q = 0u;
  for (var b = 0u; b < 32u; b++) {
    rem = (rem << 1u) | ((lo >> (31u - b)) & 1u);
    q = q << 1u;
    if (rem >= n) {
      rem = rem - n;
      q = q | 1u;
    }
  }
  if (!neg) { return bitcast<i32>(q); }
  if (rem != 0u) { return bitcast<i32>(~q); }
  return bitcast<i32>(~q + 1u);
}
)WGSL";

// Max / Min: nan propagates (any nan gives nan), as the Cpu's Extremum. Comparisons never
// see a nan (WGSL may assume finite math).
const char* const kExtremumF32 = R"WGSL(
alias S = f32;
fn identity() -> S { return select(inf_f32(), -inf_f32(), p.op == 1u); }
fn combine(a: S, b: S) -> S {
  if (is_nan_f32(a)) { return a; }
  if (is_nan_f32(b)) { return b; }
  return select(a, b, select((b < a), (b > a), p.op == 1u));
}
fn lift(v: XT, k: u32, r: u32) -> S { return v; }
)WGSL";

const char* const kExtremumI32 = R"WGSL(
alias S = i32;
fn identity() -> S { return select(bitcast<i32>(0x7fffffffu), bitcast<i32>(0x80000000u), p.op == 1u); }
fn combine(a: S, b: S) -> S { return select(a, b, select((b < a), (b > a), p.op == 1u)); }
fn lift(v: XT, k: u32, r: u32) -> S { return v; }
)WGSL";

// argmax / argmin: (value, index), the first index on ties; nan counts as the max (min) and
// the first nan wins (torch.argmax, the Cpu's ArgExtremum). Index 0xffffffff: no element.
const char* const kArgF32 = R"WGSL(
struct S { v: f32, i: u32 }
fn identity() -> S { return S(0.0, 0xffffffffu); }
fn better(a: f32, b: f32) -> bool {
  if (is_nan_f32(b)) { return false; }
  if (is_nan_f32(a)) { return true; }
  return select((a < b), (a > b), p.op == 1u);
}
)WGSL";

const char* const kArgI32 = R"WGSL(
struct S { v: i32, i: u32 }
fn identity() -> S { return S(0, 0xffffffffu); }
fn better(a: i32, b: i32) -> bool { return select((a < b), (a > b), p.op == 1u); }
)WGSL";

const char* const kArgCombine = R"WGSL(
fn combine(a: S, b: S) -> S {
  if (a.i == 0xffffffffu) { return b; }
  if (b.i == 0xffffffffu) { return a; }
  if (better(b.v, a.v)) { return b; }
  if (better(a.v, b.v) || a.i < b.i) { return a; }
  return b;
}
fn lift(v: XT, k: u32, r: u32) -> S { return S(v, k); }
)WGSL";

// Any / All of value != 0 over the raw 32-bit words (nan is non-zero, -0 is zero; bool is
// one u32 per element), so one pipeline serves every dtype.
const char* const kAnyAll = R"WGSL(
alias S = u32;
fn identity() -> S { return select(0u, 1u, (p.op & 1u) != 0u); }
fn combine(a: S, b: S) -> S { return select(a | b, a & b, (p.op & 1u) != 0u); }
fn lift(v: XT, k: u32, r: u32) -> S {
  let bits = select(v, v & 0x7fffffffu, (p.op & 2u) != 0u);
  return select(0u, 1u, bits != 0u);
}
)WGSL";

// var_mean's second pass: Σd and Σd² with d = x - mean (the corrected two-pass algorithm,
// as the Cpu's VarMeanF32), var = (Σd² - Σd·(Σd / n)) / divisor, clamped at 0; Σd² of +inf
// (d² overflowed f32, as in the Cpu's f32 partials) gives +inf.
const char* const kCenteredSums = R"WGSL(
struct S { a: f32, b: f32 }
fn identity() -> S { return S(0.0, 0.0); }
fn combine(x: S, y: S) -> S { return S(x.a + y.a, x.b + y.b); }
fn lift(v: XT, k: u32, r: u32) -> S {
  let d = v - mean[r];
  return S(d, d * d);
}
)WGSL";

const char* const kFinishVar = R"WGSL(
fn finish(r: u32, s: S) {
  var v = (s.b - s.a * (s.a / f32(p.count))) / p.aux0;
  if (p.count == 0u || p.aux0 == 0.0 || is_nan_f32(s.a) || is_nan_f32(s.b)) {
    v = nan_f32();
  } else if (is_inf_f32(s.b)) {
    v = inf_f32();
  } else if (is_nan_f32(v) || v < 0.0) {
    v = select(0.0, nan_f32(), is_nan_f32(v));
  }
  var_out[r] = v;
}
)WGSL";

const char* const kFinishValue = "fn finish(r: u32, s: S) { out0[r] = s; }\n";

/// The spec of a reduction and its run-time variant.
std::pair<Spec, std::uint32_t> reduce_spec(ReduceOp op, DType dtype) {
  Spec s;
  s.x_type = wgsl_type(dtype);
  const std::string out_t = dtype == DType::F32 ? "f32" : "i32";
  s.outputs = {"out0: array<" + out_t + ">"};
  s.finish = kFinishValue;
  std::uint32_t code = 0;
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Prod:
    case ReduceOp::Mean:
      code = op == ReduceOp::Sum ? kOpSum : op == ReduceOp::Prod ? kOpProd : kOpMean;
      if (dtype == DType::F32) {
        s.state = kArithF32;
        s.finish = kFinishArithF32;
      } else if (op == ReduceOp::Mean) {
        s.state = kMeanI32;
        s.state_bytes = 8;
        s.finish = "fn finish(r: u32, s: S) { out0[r] = floor_div(s, p.count); }\n";
      } else {
        s.state = kArithI32;
      }
      break;
    case ReduceOp::Max:
    case ReduceOp::Min:
      s.state = dtype == DType::F32 ? kExtremumF32 : kExtremumI32;
      code = op == ReduceOp::Max ? 1 : 0;
      break;
    case ReduceOp::Any:
    case ReduceOp::All:
      s.x_type = "u32";
      s.state = kAnyAll;
      s.outputs = {"out0: array<u32>"};
      code = (op == ReduceOp::All ? 1u : 0u) | (dtype == DType::F32 ? 2u : 0u);
      break;
  }
  return {s, code};
}

/// Int Sum/Prod throw LimitError on the Cpu when the exact result does not fit in i32: a
/// check on the values, which the Wgpu op can run only on a host copy of the input (a
/// tensor made by from_data). Without one the device result wraps (the low 32 bits).
void check_int_on_host(ReduceOp op, const WgpuTensor& x, std::optional<std::int64_t> dim) {
  if (x.dtype() != DType::I32 || (op != ReduceOp::Sum && op != ReduceOp::Prod) || !x.host()) return;
  const CpuTensor h = CpuOps::from_data(*x.host(), DType::I32, {});
  if (dim) {
    CpuOps::reduce_dim(op, h, *dim);
  } else {
    CpuOps::reduce(op, h);
  }
}

WgpuTensor run_reduce(ReduceOp op, const WgpuTensor& x, const Layout& l, const Shape& out_shape,
                      const char* name, std::optional<std::size_t> dim,
                      std::optional<std::int64_t> user_dim) {
  cpu::ops::check_reduce(op, name, x.dtype(), x.shape(), l.n, dim);
  check_int_on_host(op, x, user_dim);
  const DType out_dtype = op == ReduceOp::Any || op == ReduceOp::All ? DType::Bool : x.dtype();
  auto out = wgpu::allocate(name, static_cast<std::size_t>(l.results()) * 4);
  const auto [spec, code] = reduce_spec(op, x.dtype());
  run(name, spec, x.buffer(), l, {}, {out.get()}, code);
  return WgpuTensor(out_shape, out_dtype, std::move(out));
}

/// Values and indices of the max (min) along dim.
std::pair<WgpuTensor, WgpuTensor> arg_extremum(const WgpuTensor& x, std::int64_t dim, bool is_max,
                                               const char* name) {
  wgpu::check(name);
  const std::size_t d = cpu::ops::check_arg_extremum(name, is_max, x.dtype(), x.shape(), dim);
  const Layout l = around(x.shape(), d);
  const Shape out_shape = keep_dim(x.shape(), d);
  auto values = wgpu::allocate(name, static_cast<std::size_t>(l.results()) * 4);
  auto indices = wgpu::allocate(name, static_cast<std::size_t>(l.results()) * 4);
  Spec s;
  s.x_type = wgsl_type(x.dtype());
  s.state = std::string(x.dtype() == DType::F32 ? kArgF32 : kArgI32) + kArgCombine;
  s.state_bytes = 8;
  s.outputs = {std::string("vals: array<") + s.x_type + ">", "idx: array<i32>"};
  s.finish = "fn finish(r: u32, s: S) { vals[r] = s.v; idx[r] = bitcast<i32>(s.i); }\n";
  run(name, s, x.buffer(), l, {}, {values.get(), indices.get()}, is_max ? 1u : 0u);
  return {WgpuTensor(out_shape, x.dtype(), std::move(values)),
          WgpuTensor(out_shape, DType::I32, std::move(indices))};
}

// ---- sort ----
// A bitonic sort of (key, index) pairs per line along dim, each line padded to P = the
// next power of two with (0xffffffff, 0xffffffff), which sorts last. Keys are u32 whose
// unsigned order is the value order: f32 by its bits (sign-flipped), -0 as +0, every nan
// as 0xffffffff (last); i32 with the sign bit flipped; descending sorts the complement
// (nan first). Ties are broken by the index, so every key is distinct and the sort is
// stable, as the Cpu's. Steps with j < kBlock run in workgroup memory on blocks of kBlock
// slots (one dispatch for all the steps of stages up to kBlock, one per later stage),
// longer ones as one dispatch per step over the whole array (a line of 5000 elements: 8192
// slots, 10 such dispatches). The values are then gathered from x by the sorted indices
// (so -0 stays -0 and nan keeps its bits).

/// Slots sorted in workgroup memory (2 · 4 bytes each). SwiftShader's compile time grows
/// with a kernel's workgroup memory (~10 s for 16 KB, ~2 s for 4 KB), hence not 2048.
constexpr std::uint32_t kBlock = 512;

struct SortParams {
  std::uint32_t n, inner, p, total;  // line length, stride, padded length, lines · p
  std::uint32_t k_lo, k_hi, j_first;
  std::uint32_t flags;  // bit 0 descending, bit 1 f32
};

const char* const kSortParams = R"WGSL(
struct P { n: u32, inner: u32, len: u32, total: u32, k_lo: u32, k_hi: u32, j_first: u32, flags: u32 }
)WGSL";

const char* const kSortInit = R"WGSL(
@group(0) @binding(0) var<storage, read> x: array<u32>;
@group(0) @binding(1) var<storage, read_write> keys: array<u32>;
@group(0) @binding(2) var<storage, read_write> ids: array<u32>;
@group(0) @binding(3) var<uniform> p: P;
fn key_of(b: u32) -> u32 {
  if ((p.flags & 2u) != 0u) {
    if ((b & 0x7f800000u) == 0x7f800000u && (b & 0x007fffffu) != 0u) { return 0xffffffffu; }
    var u = b;
    if (u == 0x80000000u) { u = 0u; }
    if ((u & 0x80000000u) != 0u) { return ~u; }
    return u | 0x80000000u;
  }
  return b ^ 0x80000000u;
}
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let e = flat_index(gid, nwg, 256u);
  if (e >= p.total) { return; }
  let line = e / p.len;
  let pos = e % p.len;
  if (pos >= p.n) {
    keys[e] = 0xffffffffu;
    ids[e] = 0xffffffffu;
    return;
  }
  let o = line / p.inner;
  let i = line % p.inner;
  let k = key_of(x[(o * p.n + pos) * p.inner + i]);
  keys[e] = select(k, ~k, (p.flags & 1u) != 0u);
  ids[e] = pos;
}
)WGSL";

// One compare-exchange step (k, j) over the whole array: thread q handles the pair
// (a, a + j), a = q with a 0 inserted at bit log2(j); ascending where (a mod len) & k == 0.
const char* const kSortGlobal = R"WGSL(
@group(0) @binding(0) var<storage, read_write> keys: array<u32>;
@group(0) @binding(1) var<storage, read_write> ids: array<u32>;
@group(0) @binding(2) var<uniform> p: P;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let q = flat_index(gid, nwg, 256u);
  if (q >= p.total / 2u) { return; }
  let j = p.j_first;
  let a = ((q & ~(j - 1u)) << 1u) | (q & (j - 1u));
  let b = a + j;
  let asc = ((a & (p.len - 1u)) & p.k_lo) == 0u;
  let ka = keys[a];
  let kb = keys[b];
  let ia = ids[a];
  let ib = ids[b];
  let greater = ka > kb || (ka == kb && ia > ib);
  if (greater == asc) {
    keys[a] = kb;
    keys[b] = ka;
    ids[a] = ib;
    ids[b] = ia;
  }
}
)WGSL";

// Stages k = k_lo .. k_hi (doubling), j from j_first (first stage) or k/2 down to 1, on a
// block of kBlock consecutive elements in workgroup memory (pairs never leave the block:
// j < kBlock, and a block holds whole lines when len < kBlock).
const char* const kSortLocal = R"WGSL(
@group(0) @binding(0) var<storage, read_write> keys: array<u32>;
@group(0) @binding(1) var<storage, read_write> ids: array<u32>;
@group(0) @binding(2) var<uniform> p: P;
var<workgroup> sk: array<u32, BLOCK>;
var<workgroup> si: array<u32, BLOCK>;
@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {
  let blk = wid.x + wid.y * nwg.x;
  let base = blk * BLOCK;
  if (base >= p.total) { return; }
  let cnt = min(BLOCK, p.total - base);
  for (var e = li; e < cnt; e += 256u) {
    sk[e] = keys[base + e];
    si[e] = ids[base + e];
  }
  workgroupBarrier();
  var k = p.k_lo;
  var j = p.j_first;
  loop {
    if (k > p.k_hi) { break; }
    for (var q = li; q < BLOCK / 2u; q += 256u) {
      let a = ((q & ~(j - 1u)) << 1u) | (q & (j - 1u));
      let b = a + j;
      if (b < cnt) {
        let asc = (((base + a) & (p.len - 1u)) & k) == 0u;
        let ka = sk[a];
        let kb = sk[b];
        let ia = si[a];
        let ib = si[b];
        let greater = ka > kb || (ka == kb && ia > ib);
        if (greater == asc) {
          sk[a] = kb;
          sk[b] = ka;
          si[a] = ib;
          si[b] = ia;
        }
      }
    }
    workgroupBarrier();
    if (j > 1u) {
      j = j >> 1u;
    } else {
      k = k << 1u;
      j = k >> 1u;
    }
  }
  for (var e = li; e < cnt; e += 256u) {
    keys[base + e] = sk[e];
    ids[base + e] = si[e];
  }
}
)WGSL";

// The outputs: values gathered from x by the sorted indices, and the indices as i32.
const char* const kSortFinal = R"WGSL(
@group(0) @binding(0) var<storage, read> x: array<u32>;
@group(0) @binding(1) var<storage, read> ids: array<u32>;
@group(0) @binding(2) var<storage, read_write> vals: array<u32>;
@group(0) @binding(3) var<storage, read_write> idx: array<u32>;
@group(0) @binding(4) var<uniform> p: P;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let e = flat_index(gid, nwg, 256u);
  let lines = p.total / p.len;
  if (e >= lines * p.n) { return; }
  let line = e / p.n;
  let pos = e % p.n;
  let o = line / p.inner;
  let i = line % p.inner;
  let src = ids[line * p.len + pos];
  let dst = (o * p.n + pos) * p.inner + i;
  vals[dst] = x[(o * p.n + src) * p.inner + i];
  idx[dst] = src;
}
)WGSL";

std::string sort_source(const char* body) {
  return std::string(wgpu::kPrelude) + "const BLOCK = " + std::to_string(kBlock) + "u;\n" +
         kSortParams + body;
}

}  // namespace

WgpuTensor WgpuOps::reduce(ReduceOp op, const WgpuTensor& x) {
  const char* name = cpu::ops::reduce_op_name(op, false);
  wgpu::check(name);
  return run_reduce(op, x, whole(x), Shape{1}, name, std::nullopt, std::nullopt);
}

WgpuTensor WgpuOps::reduce_dim(ReduceOp op, const WgpuTensor& x, std::int64_t dim) {
  const char* name = cpu::ops::reduce_op_name(op, true);
  wgpu::check(name);
  const auto d = static_cast<std::size_t>(check::dim(name, dim, x.shape().rank()));
  return run_reduce(op, x, around(x.shape(), d), keep_dim(x.shape(), d), name, d, dim);
}

std::pair<WgpuTensor, WgpuTensor> WgpuOps::max_dim_with_indices(const WgpuTensor& x,
                                                                std::int64_t dim) {
  return arg_extremum(x, dim, true, "max_dim_with_indices");
}

std::pair<WgpuTensor, WgpuTensor> WgpuOps::min_dim_with_indices(const WgpuTensor& x,
                                                                std::int64_t dim) {
  return arg_extremum(x, dim, false, "min_dim_with_indices");
}

WgpuTensor WgpuOps::argmax(const WgpuTensor& x, std::int64_t dim) {
  return arg_extremum(x, dim, true, "argmax").second;
}

WgpuTensor WgpuOps::argmin(const WgpuTensor& x, std::int64_t dim) {
  return arg_extremum(x, dim, false, "argmin").second;
}

std::pair<WgpuTensor, WgpuTensor> WgpuOps::var_mean(const WgpuTensor& x, std::int64_t dim,
                                                    bool unbiased) {
  wgpu::check("var_mean");
  const std::size_t d = cpu::ops::check_var_mean(x.dtype(), x.shape(), dim);
  const Layout l = around(x.shape(), d);
  const Shape out_shape = keep_dim(x.shape(), d);
  auto var = wgpu::allocate("var_mean", static_cast<std::size_t>(l.results()) * 4);
  auto mean = wgpu::allocate("var_mean", static_cast<std::size_t>(l.results()) * 4);
  // Pass 1: the mean (f32 sum / n); pass 2: the centered sums. Unbiased with n = 1 divides
  // by 0: nan, as the Cpu (0 / 0, or nan already for a non-finite element).
  const auto [mean_spec, mean_code] = reduce_spec(ReduceOp::Mean, DType::F32);
  run("var_mean", mean_spec, x.buffer(), l, {}, {mean.get()}, mean_code);
  Spec s;
  s.x_type = "f32";
  s.state = kCenteredSums;
  s.state_bytes = 8;
  s.extra_reads = {"mean: array<f32>"};
  s.outputs = {"var_out: array<f32>"};
  s.finish = kFinishVar;
  const float divisor = static_cast<float>(l.n) - (unbiased ? 1.f : 0.f);
  run("var_mean", s, x.buffer(), l, {mean.get()}, {var.get()}, 0, divisor);
  return {WgpuTensor(out_shape, DType::F32, std::move(var)),
          WgpuTensor(out_shape, DType::F32, std::move(mean))};
}

std::pair<WgpuTensor, WgpuTensor> WgpuOps::sort_with_indices(const WgpuTensor& x,
                                                             std::int64_t dim, bool descending) {
  wgpu::check("sort");
  const std::size_t d = cpu::ops::check_sort(x.dtype(), x.shape(), dim);
  const std::int64_t numel = x.num_elements();
  auto values = wgpu::allocate("sort", static_cast<std::size_t>(numel) * 4);
  auto indices = wgpu::allocate("sort", static_cast<std::size_t>(numel) * 4);
  WgpuTensor out_values(x.shape(), x.dtype(), std::move(values));
  WgpuTensor out_indices(x.shape(), DType::I32, std::move(indices));
  if (numel == 0) return {out_values, out_indices};
  const Layout l = around(x.shape(), d);
  std::uint64_t len = 1;
  while (len < l.n) len <<= 1;
  const std::uint64_t total = len * l.results();
  if (total > (std::uint64_t{1} << 31)) {
    throw_error<LimitError>("sort: ", l.results(), " lines of ", l.n, " elements, each padded to ",
                            len, ", exceed the webgpu backend's 2^31 sort slots (shape ", x.shape(),
                            ")");
  }
  auto keys = wgpu::allocate("sort", static_cast<std::size_t>(total) * 4);
  auto ids = wgpu::allocate("sort", static_cast<std::size_t>(total) * 4);
  SortParams p{l.n, l.inner, static_cast<std::uint32_t>(len), static_cast<std::uint32_t>(total),
               0, 0, 0, (descending ? 1u : 0u) | (x.dtype() == DType::F32 ? 2u : 0u)};
  const auto& init = wgpu::kernel(sort_source(kSortInit), 1, 2, true);
  wgpu::dispatch(init, {&x.buffer(), keys.get(), ids.get()}, p, wgpu::groups_for(static_cast<std::int64_t>(total)));
  const std::int64_t blocks = static_cast<std::int64_t>((total + kBlock - 1) / kBlock);
  if (len >= 2) {
    const auto& local = wgpu::kernel(sort_source(kSortLocal), 0, 2, true);
    p.k_lo = 2;
    p.k_hi = static_cast<std::uint32_t>(len < kBlock ? len : kBlock);
    p.j_first = 1;
    wgpu::dispatch(local, {keys.get(), ids.get()}, p, wgpu::groups_for(blocks * 256, 256));
  }
  for (std::uint64_t k = 2 * kBlock; k <= len; k <<= 1) {
    const auto& local = wgpu::kernel(sort_source(kSortLocal), 0, 2, true);
    const auto& global = wgpu::kernel(sort_source(kSortGlobal), 0, 2, true);
    p.k_lo = p.k_hi = static_cast<std::uint32_t>(k);
    for (std::uint64_t j = k / 2; j >= kBlock; j >>= 1) {
      p.j_first = static_cast<std::uint32_t>(j);
      wgpu::dispatch(global, {keys.get(), ids.get()}, p, wgpu::groups_for(static_cast<std::int64_t>(total / 2)));
    }
    p.j_first = kBlock / 2;
    wgpu::dispatch(local, {keys.get(), ids.get()}, p, wgpu::groups_for(blocks * 256, 256));
  }
  const auto& fin = wgpu::kernel(sort_source(kSortFinal), 2, 2, true);
  wgpu::dispatch(fin, {&x.buffer(), ids.get(), &out_values.buffer(), &out_indices.buffer()}, p,
                 wgpu::groups_for(numel));
  return {out_values, out_indices};
}

}  // namespace kiln
