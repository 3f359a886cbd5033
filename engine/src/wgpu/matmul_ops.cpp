// Matrix product of the Wgpu backend (kiln/wgpu/wgpu.hpp): the Cpu backend's checks
// (cpu/ops/shape_checks.hpp: matmul_shape), then one dispatch over every batch element.
//
// Two kernels share the parameters and the batch addressing:
//   - tiled (from the webgpu-spike branch's spike/glue/kgpu.cpp): a workgroup of 16×16
//     threads computes one 64×64 tile of one batch element's output, 4×4 outputs per
//     thread, stepping through k 16 at a time with both operands' 64×16 slabs staged in
//     workgroup memory (zero-padded past m, n and k, so any m, n, k works). Tiles are
//     numbered batch-major over a 2-D grid of workgroups (groups_for), so the batch may
//     exceed 65,535;
//   - per output: one thread per output element, for products whose outputs would fill less
//     than an eighth of their tiles (m or n below 8, matrices below ~23×23: vectors, many
//     tiny matrices), where the tiled kernel would idle most of its threads.
// Operands are read through strides: a transposed operand with its last two strides swapped
// (no copy), a batch dim of size 1 with stride 0 (broadcast). k = 0 gives zeros; an empty
// output dispatches nothing.
//
// Rounding: each output is one f32 accumulator summed over k in order 0, 1, ..., k - 1 (a
// multiply-add per step, fused or not as the device compiles it), in both kernels. The Cpu
// backend's packed GEMM also accumulates in f32 but in another order (blocked over k), so
// the two differ by rounding, about eps·k/10 or less in absolute terms for data in [-1, 1)
// (tests/webgpu/cases_shape.mjs sets its tolerances from that). nan and ±inf propagate as
// IEEE products and sums (the tiles' padding multiplies zeros with zeros only). Devices may
// flush subnormal products to zero (WGSL allows it; SwiftShader does).
#include <array>
#include <cstdint>
#include <string>

#include "cpu/ops/shape_checks.hpp"
#include "kiln/cpu/allocation.hpp"
#include "kiln/wgpu/wgpu.hpp"
#include "wgpu/runtime.hpp"

namespace kiln {
namespace {

constexpr std::size_t kMaxRank = Shape::max_rank;
constexpr std::int64_t kTile = 64;

// A(i, kk) = a[a_off + i·a_rs + kk·a_cs], B(kk, j) = b[b_off + kk·b_rs + j·b_cs], where the
// batch offsets a_off, b_off come from the batch index over bshape with per-dim strides
// bsa, bsb (0 for a broadcast dim). O[b, i, j] = Σ_kk A(i, kk)·B(kk, j), contiguous.
const char* const kMatmulCommon = R"WGSL(
struct P {
  m: u32, n: u32, k: u32, count: u32,
  tiles_n: u32, tiles_mn: u32, batch_rank: u32, pad: u32,
  a_rs: u32, a_cs: u32, b_rs: u32, b_cs: u32,
  bshape: array<vec4<u32>, 2>,
  bsa: array<vec4<u32>, 2>,
  bsb: array<vec4<u32>, 2>,
}
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> p: P;
// The element offsets of batch element `batch` in a and b.
fn batch_offsets(batch: u32) -> vec2<u32> {
  var off = vec2<u32>(0u, 0u);
  var rest = batch;
  for (var d = p.batch_rank; d > 0u; d--) {
    let q = d - 1u;
    let size = p.bshape[q / 4u][q % 4u];
    let i = rest % size;
    rest = rest / size;
    off += i * vec2<u32>(p.bsa[q / 4u][q % 4u], p.bsb[q / 4u][q % 4u]);
  }
  return off;
}
)WGSL";

// One workgroup of 16×16 threads per 64×64 output tile, 4×4 outputs per thread; p.count is
// the number of tiles (batch-major, then tile rows, then tile columns).
const char* const kMatmulTiled = R"WGSL(
var<workgroup> As: array<f32, 1024>;  // [k][m], 16 x 64
var<workgroup> Bs: array<f32, 1024>;  // [k][n], 16 x 64
@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_id) l: vec3<u32>) {
  let tile = wg.x + wg.y * nwg.x;
  if (tile >= p.count) { return; }  // uniform: the whole workgroup leaves
  let batch = tile / p.tiles_mn;
  let in_batch = tile % p.tiles_mn;
  let r0 = (in_batch / p.tiles_n) * 64u;
  let c0 = (in_batch % p.tiles_n) * 64u;
  let off = batch_offsets(batch);
  let tid = l.y * 16u + l.x;
  var acc: array<vec4<f32>, 4>;
  for (var t = 0u; t < p.k; t += 16u) {
    for (var e = 0u; e < 4u; e++) {
      let idx = tid + e * 256u;
      let mm = idx / 16u;
      let ka = idx % 16u;
      let gr = r0 + mm;
      let gka = t + ka;
      var v = 0.0;
      if (gr < p.m && gka < p.k) { v = a[off.x + gr * p.a_rs + gka * p.a_cs]; }
      As[ka * 64u + mm] = v;
      let kb = idx / 64u;
      let nn = idx % 64u;
      let gkb = t + kb;
      let gc = c0 + nn;
      var w = 0.0;
      if (gkb < p.k && gc < p.n) { w = b[off.y + gkb * p.b_rs + gc * p.b_cs]; }
      Bs[kb * 64u + nn] = w;
    }
    workgroupBarrier();
    for (var kk = 0u; kk < 16u; kk++) {
      let ab = kk * 64u + l.y * 4u;
      let bb = kk * 64u + l.x * 4u;
      let bv = vec4<f32>(Bs[bb], Bs[bb + 1u], Bs[bb + 2u], Bs[bb + 3u]);
      acc[0] += As[ab] * bv;
      acc[1] += As[ab + 1u] * bv;
      acc[2] += As[ab + 2u] * bv;
      acc[3] += As[ab + 3u] * bv;
    }
    workgroupBarrier();
  }
  let o_off = batch * p.m * p.n;
  for (var i = 0u; i < 4u; i++) {
    let row = r0 + l.y * 4u + i;
    if (row >= p.m) { break; }
    for (var j = 0u; j < 4u; j++) {
      let col = c0 + l.x * 4u + j;
      if (col < p.n) { out[o_off + row * p.n + col] = acc[i][j]; }
    }
  }
}
)WGSL";

// One thread per output (p.count outputs), summing k in the same order as the tiled kernel.
const char* const kMatmulPerOutput = R"WGSL(
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = flat_index(gid, nwg, 256u);
  if (i >= p.count) { return; }
  let mn = p.m * p.n;
  let batch = i / mn;
  let row = (i % mn) / p.n;
  let col = i % p.n;
  let off = batch_offsets(batch);
  var pa = off.x + row * p.a_rs;
  var pb = off.y + col * p.b_cs;
  var acc = 0.0;
  for (var kk = 0u; kk < p.k; kk++) {
    acc += a[pa] * b[pb];
    pa += p.a_cs;
    pb += p.b_rs;
  }
  out[i] = acc;
}
)WGSL";

struct MatmulParams {
  std::uint32_t m, n, k, count;
  std::uint32_t tiles_n, tiles_mn, batch_rank, pad;
  std::uint32_t a_rs, a_cs, b_rs, b_cs;
  std::uint32_t bshape[kMaxRank], bsa[kMaxRank], bsb[kMaxRank];
};
static_assert(sizeof(MatmulParams) == 144);

}  // namespace

WgpuTensor WgpuOps::matmul(const WgpuTensor& lhs, const WgpuTensor& rhs) {
  return matmul_transposed(lhs, rhs, false, false);
}

WgpuTensor WgpuOps::matmul_transposed(const WgpuTensor& lhs, const WgpuTensor& rhs,
                                      bool transpose_lhs, bool transpose_rhs) {
  wgpu::check("matmul");
  const Shape out_shape = cpu::ops::matmul_shape(lhs.shape(), lhs.dtype(), rhs.shape(),
                                                 rhs.dtype(), transpose_lhs, transpose_rhs);
  cpu::check_allocation("tensor", out_shape, DType::F32);  // as CpuTensor's constructor
  const std::int64_t total = out_shape.num_elements();
  auto out = wgpu::allocate("matmul", static_cast<std::size_t>(total) * 4);
  if (total > 0) {
    const Shape& ls = lhs.shape();
    const Shape& rs = rhs.shape();
    const std::size_t rank = out_shape.rank();
    const std::size_t batch_rank = rank - 2;
    const std::int64_t m = out_shape[rank - 2], n = out_shape[rank - 1];
    const std::int64_t k = ls[transpose_lhs ? rank - 2 : rank - 1];
    const std::int64_t tiles_n = (n + kTile - 1) / kTile;
    const std::int64_t tiles_mn = (m + kTile - 1) / kTile * tiles_n;
    const std::int64_t batch = total / (m * n);
    // Tiles less than an eighth full (m or n below 8, or both below ~23): one thread per output.
    const bool tiled = 8 * m * n >= tiles_mn * kTile * kTile;
    MatmulParams p{};
    p.m = static_cast<std::uint32_t>(m);
    p.n = static_cast<std::uint32_t>(n);
    p.k = static_cast<std::uint32_t>(k);
    p.count = static_cast<std::uint32_t>(tiled ? tiles_mn * batch : total);
    p.tiles_n = static_cast<std::uint32_t>(tiles_n);
    p.tiles_mn = static_cast<std::uint32_t>(tiles_mn);
    p.batch_rank = static_cast<std::uint32_t>(batch_rank);
    // A stored transposed ([k, m] row-major) is read with swapped strides; likewise B.
    p.a_rs = static_cast<std::uint32_t>(transpose_lhs ? 1 : k);
    p.a_cs = static_cast<std::uint32_t>(transpose_lhs ? m : 1);
    p.b_rs = static_cast<std::uint32_t>(transpose_rhs ? 1 : n);
    p.b_cs = static_cast<std::uint32_t>(transpose_rhs ? k : 1);
    // Element strides of each operand's batch dims; 0 where a dim of size 1 is broadcast.
    std::int64_t la = m * k, ra = k * n;
    for (std::size_t d = batch_rank; d-- > 0;) {
      p.bshape[d] = static_cast<std::uint32_t>(out_shape[d]);
      p.bsa[d] = static_cast<std::uint32_t>(ls[d] == 1 ? 0 : la);
      p.bsb[d] = static_cast<std::uint32_t>(rs[d] == 1 ? 0 : ra);
      la *= ls[d];
      ra *= rs[d];
    }
    const std::string common = std::string(wgpu::kPrelude) + kMatmulCommon;
    const auto& kern = wgpu::kernel(common + (tiled ? kMatmulTiled : kMatmulPerOutput), 2, 1, true);
    wgpu::dispatch(kern, {&lhs.buffer(), &rhs.buffer(), out.get()}, p,
                   tiled ? wgpu::groups_for(p.count, 1) : wgpu::groups_for(p.count));
  }
  return WgpuTensor(out_shape, DType::F32, std::move(out));
}

}  // namespace kiln
