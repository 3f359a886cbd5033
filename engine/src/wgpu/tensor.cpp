// WgpuTensor, the creation ops and cast of the Wgpu backend (kiln/wgpu/wgpu.hpp).
#include <cstring>
#include <string>
#include <vector>

#include "kiln/cpu/cpu.hpp"
#include "kiln/wgpu/wgpu.hpp"
#include "wgpu/runtime.hpp"

namespace kiln {

WgpuTensor::WgpuTensor(Shape shape, DType dtype, std::shared_ptr<wgpu::Buffer> buffer,
                       std::shared_ptr<const TensorData> host)
    : buffer_(std::move(buffer)),
      host_(std::move(host)),
      shape_(shape),
      dtype_(dtype),
      num_elements_(shape.num_elements()) {}

const wgpu::Buffer& WgpuTensor::buffer() const {
  if (!buffer_) {
    throw_error<StateError>(
        "tensor: this handle has no device buffer (it was moved from or never "
        "initialised)");
  }
  return *buffer_;
}

WgpuTensor WgpuTensor::with_shape(Shape shape) const {
  std::shared_ptr<const TensorData> host;
  if (host_) {
    auto copy = std::make_shared<TensorData>(*host_);
    copy->shape = shape;
    host = std::move(copy);
  }
  return WgpuTensor(shape, dtype_, buffer_, std::move(host));
}

namespace {

// The host data as the device stores it: f32 and i32 as they are, bool as one u32 each.
std::vector<std::uint8_t> device_bytes(const TensorData& data) {
  if (data.dtype != DType::Bool) return data.bytes;
  std::vector<std::uint8_t> out(data.bytes.size() * 4, 0);
  for (std::size_t i = 0; i < data.bytes.size(); ++i) out[i * 4] = data.bytes[i] != 0;
  return out;
}

// Fills n 32-bit words with `bits` (f32, i32 or bool-as-u32 bit patterns).
const char* const kFill = R"WGSL(
struct P { bits: u32, n: u32 }
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@group(0) @binding(1) var<uniform> p: P;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = flat_index(gid, nwg, 256u);
  if (i < p.n) { out[i] = p.bits; }
}
)WGSL";

// dtype codes of the cast kernel: 0 f32, 1 i32, 2 bool (u32).
std::uint32_t code(DType d) { return d == DType::F32 ? 0u : d == DType::I32 ? 1u : 2u; }

const char* const kCast = R"WGSL(
struct P { src: u32, dst: u32, n: u32 }
@group(0) @binding(0) var<storage, read> x: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;
@group(0) @binding(2) var<uniform> p: P;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = flat_index(gid, nwg, 256u);
  if (i >= p.n) { return; }
  let b = x[i];
  var r: u32;
  if (p.dst == 2u) {                       // any -> bool: != 0 (nan is non-zero, -0 is zero)
    if (p.src == 0u) { r = select(0u, 1u, (b & 0x7fffffffu) != 0u); } else { r = select(0u, 1u, b != 0u); }
  } else if (p.dst == 0u) {                // -> f32
    if (p.src == 1u) { r = bitcast<u32>(f32(bitcast<i32>(b))); } else { r = bitcast<u32>(f32(b)); }
  } else {                                // -> i32: f32 truncates toward zero
    if (p.src == 0u) { r = bitcast<u32>(i32(bitcast<f32>(b))); } else { r = b; }
  }
  out[i] = r;
}
)WGSL";

}  // namespace

WgpuTensor WgpuOps::from_data(const TensorData& data, DType dtype, const WgpuDevice&) {
  wgpu::check("from_data");
  const auto expected = static_cast<std::size_t>(data.shape.num_elements()) * dtype_size(data.dtype);
  if (data.bytes.size() != expected) {
    throw_error<ShapeError>("from_data: shape ", data.shape, " of ", data.dtype, " needs ",
                            expected, " bytes, the data holds ", data.bytes.size());
  }
  auto host = std::make_shared<const TensorData>(data.dtype == dtype ? data : data.convert(dtype));
  const std::vector<std::uint8_t> bytes = device_bytes(*host);
  auto buffer = wgpu::upload("from_data", bytes.data(), bytes.size());
  return WgpuTensor(data.shape, dtype, std::move(buffer), std::move(host));
}

TensorData WgpuOps::into_data(const WgpuTensor& x) {
  x.buffer();  // throws StateError for a moved-from handle
  if (!x.host()) {
    throw_error<StateError>(
        "into_data: the webgpu backend reads tensors asynchronously (JS: await "
        "tensor.data()); only a tensor made from host data can be read at once");
  }
  return *x.host();
}

WgpuTensor WgpuOps::full(const Shape& shape, double value, DType dtype, const WgpuDevice&) {
  wgpu::check("full");
  std::uint32_t bits = 0;
  switch (dtype) {
    case DType::F32: {
      const float f = static_cast<float>(value);
      std::memcpy(&bits, &f, 4);
      break;
    }
    case DType::I32: {
      if (!(value >= -2147483648.0 && value <= 2147483647.0)) {
        throw_error<ValueError>("full: value ", value, " does not fit in i32");
      }
      const auto v = static_cast<std::int32_t>(value);
      std::memcpy(&bits, &v, 4);
      break;
    }
    case DType::Bool: bits = value != 0.0; break;
  }
  const std::int64_t n = shape.num_elements();
  auto out = wgpu::allocate("full", static_cast<std::size_t>(n) * 4);
  if (n > 0) {
    struct { std::uint32_t bits, n; } p{bits, static_cast<std::uint32_t>(n)};
    const auto& k = wgpu::kernel(std::string(wgpu::kPrelude) + kFill, 0, 1, true);
    wgpu::dispatch(k, {out.get()}, p, wgpu::groups_for(n));
  }
  return WgpuTensor(shape, dtype, std::move(out));
}

// random, arange and eye are made on the host by the Cpu backend (the same generator, so a
// seed gives the same values on both backends) and uploaded.
WgpuTensor WgpuOps::random(const Shape& shape, const Distribution& distribution, DType dtype,
                           const WgpuDevice& device) {
  wgpu::check("random");
  return from_data(CpuOps::into_data(CpuOps::random(shape, distribution, dtype, {})), dtype, device);
}

WgpuTensor WgpuOps::arange(double start, double end, double step, DType dtype,
                           const WgpuDevice& device) {
  wgpu::check("arange");
  return from_data(CpuOps::into_data(CpuOps::arange(start, end, step, dtype, {})), dtype, device);
}

WgpuTensor WgpuOps::eye(std::int64_t n, std::int64_t m, DType dtype, const WgpuDevice& device) {
  wgpu::check("eye");
  return from_data(CpuOps::into_data(CpuOps::eye(n, m, dtype, {})), dtype, device);
}

WgpuTensor WgpuOps::cast(WgpuTensor x, DType to) {
  wgpu::check("cast");
  if (x.dtype() == to) return x;
  const std::int64_t n = x.num_elements();
  auto out = wgpu::allocate("cast", static_cast<std::size_t>(n) * 4);
  if (n > 0) {
    struct { std::uint32_t from, to, n; } p{code(x.dtype()), code(to), static_cast<std::uint32_t>(n)};
    const auto& k = wgpu::kernel(std::string(wgpu::kPrelude) + kCast, 1, 1, true);
    wgpu::dispatch(k, {&x.buffer(), out.get()}, p, wgpu::groups_for(n));
  }
  std::shared_ptr<const TensorData> host;
  if (x.host()) host = std::make_shared<const TensorData>(x.host()->convert(to));
  return WgpuTensor(x.shape(), to, std::move(out), std::move(host));
}

void Wgpu::seed(std::uint64_t seed) { Cpu::seed(seed); }

}  // namespace kiln
