#include "wgpu/runtime.hpp"

#include <string>
#include <unordered_map>

#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"

// The imports of bindings/webgpu/kgpu.js (an Emscripten --js-library).
extern "C" {
int kg_init();
int kg_buffer(double bytes);
int kg_upload(const void* data, double bytes);
void kg_release(int id);
int kg_pipeline(const char* wgsl, int nread, int nrw, int params);
int kg_dispatch(int pipeline, const int* buffers, int count, const void* params, int param_bytes,
                 unsigned x, unsigned y, unsigned z);
void kg_flush();
int kg_status();
void kg_error_message(char* out, int capacity);
double kg_max_buffer_size();
void kg_set_check_flags(int id);
}

namespace kiln::wgpu {
namespace {

struct Runtime {
  bool ready = false;
  double max_buffer_size = 0;
  std::unordered_map<std::string, Kernel> kernels;
};

Runtime& runtime() {
  static Runtime rt = [] {
    Runtime r;
    r.ready = kg_init() != 0;
    if (r.ready) r.max_buffer_size = kg_max_buffer_size();
    return r;
  }();
  return rt;
}

std::string sticky_message() {
  std::string message(1024, '\0');
  kg_error_message(message.data(), static_cast<int>(message.size()));
  message.resize(message.find('\0'));
  return message;
}

std::size_t padded(std::size_t bytes) { return bytes < 4 ? 4 : (bytes + 3) & ~std::size_t{3}; }

void check_size(const char* op, std::size_t bytes) {
  const double limit = runtime().max_buffer_size;
  if (static_cast<double>(bytes) > limit) {
    throw_error<OutOfMemoryError>(op, ": a buffer of ", bytes,
                                  " bytes exceeds the WebGPU device's maxBufferSize (",
                                  static_cast<std::uint64_t>(limit), " bytes)");
  }
}

}  // namespace

namespace {
DeviceMemory g_memory;

std::shared_ptr<Buffer> counted(int id, std::size_t bytes) {
  auto buffer = std::make_shared<Buffer>(id, bytes);
  g_memory.live_buffers += 1;
  g_memory.live_bytes += static_cast<std::int64_t>(bytes);
  if (g_memory.live_bytes > g_memory.peak_bytes) g_memory.peak_bytes = g_memory.live_bytes;
  return buffer;
}
}  // namespace

Buffer::~Buffer() {
  g_memory.live_buffers -= 1;
  g_memory.live_bytes -= static_cast<std::int64_t>(bytes_);
  kg_release(id_);
}

DeviceMemory device_memory() noexcept { return g_memory; }

bool available() noexcept { return runtime().ready; }

void check(const char* op) {
  if (!runtime().ready) {
    throw_error<DeviceError>(op,
                             ": the webgpu backend has no device (the module was not given "
                             "one: init({ backend: 'webgpu' }) requests it)");
  }
  switch (kg_status()) {
    case 0: return;
    case 2:
      throw_error<OutOfMemoryError>(op, ": ", sticky_message());
    default:
      throw_error<DeviceError>(op, ": ", sticky_message());
  }
}

std::shared_ptr<Buffer> allocate(const char* op, std::size_t bytes) {
  check(op);
  bytes = padded(bytes);
  check_size(op, bytes);
  const int id = kg_buffer(static_cast<double>(bytes));
  if (id == 0) check(op);  // kgpu.js set the sticky error
  if (id == 0)
    throw_error<OutOfMemoryError>(op, ": WebGPU could not create a buffer of ", bytes, " bytes");
  return counted(id, bytes);
}

std::shared_ptr<Buffer> upload(const char* op, const void* data, std::size_t bytes) {
  check(op);
  check_size(op, padded(bytes));
  const int id = kg_upload(data, static_cast<double>(bytes));
  if (id == 0) check(op);
  if (id == 0)
    throw_error<OutOfMemoryError>(op, ": WebGPU could not create a buffer of ", bytes, " bytes");
  return counted(id, padded(bytes));
}

const Kernel& kernel(const std::string& wgsl, int nread, int nrw, bool params) {
  auto& cache = runtime().kernels;
  auto it = cache.find(wgsl);
  if (it != cache.end()) return it->second;
  Kernel k;
  k.id = kg_pipeline(wgsl.c_str(), nread, nrw, params ? 1 : 0);
  k.nread = nread;
  k.nrw = nrw;
  k.params = params;
  return cache.emplace(wgsl, k).first->second;
}

std::array<std::uint32_t, 3> groups_for(std::int64_t invocations, std::uint32_t workgroup_size) {
  const std::int64_t groups = (invocations + workgroup_size - 1) / workgroup_size;
  if (groups <= 65535) return {static_cast<std::uint32_t>(groups < 1 ? 1 : groups), 1, 1};
  const std::int64_t y = (groups + 65534) / 65535;
  return {65535u, static_cast<std::uint32_t>(y), 1};
}

void dispatch(const Kernel& k, std::initializer_list<const Buffer*> buffers, const void* params,
              std::size_t param_bytes, std::array<std::uint32_t, 3> groups) {
  int ids[16];
  int n = 0;
  if (buffers.size() > 16 || static_cast<int>(buffers.size()) != k.nread + k.nrw) {
    throw_error<StateError>("wgpu::dispatch: a kernel with ", k.nread, " + ", k.nrw,
                            " buffers got ", buffers.size(), " (an engine bug)");
  }
  for (const Buffer* b : buffers) ids[n++] = b->id();
  if (kg_dispatch(k.id, ids, n, k.params ? params : nullptr, k.params ? static_cast<int>(param_bytes) : 0,
                  groups[0], groups[1], groups[2]) == 2) {
    throw_error<OutOfMemoryError>(
        "tensor: an input was computed while the GPU ran out of memory (its buffer "
        "was never allocated): compute it again");
  }
}

void flush() { kg_flush(); }

namespace {
bool g_check_flags_made = false;
}  // namespace

bool check_flags_made() noexcept { return g_check_flags_made; }

const std::shared_ptr<Buffer>& check_flags_buffer() {
  static const std::shared_ptr<Buffer> flags = [] {
    const std::uint32_t zero[4] = {0, 0, 0, 0};
    auto b = upload("check_flags", zero, sizeof zero);
    kg_set_check_flags(b->id());
    g_check_flags_made = true;
    return b;
  }();
  return flags;
}

const Buffer& check_flags() { return *check_flags_buffer(); }

const std::string_view kPrelude = R"WGSL(
fn flat_index(gid: vec3<u32>, nwg: vec3<u32>, wg: u32) -> u32 {
  return gid.x + gid.y * nwg.x * wg;
}
fn is_nan_f32(x: f32) -> bool {
  let b = bitcast<u32>(x);
  return (b & 0x7f800000u) == 0x7f800000u && (b & 0x007fffffu) != 0u;
}
fn is_inf_f32(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) == 0x7f800000u; }
fn is_finite_f32(x: f32) -> bool { return (bitcast<u32>(x) & 0x7f800000u) != 0x7f800000u; }
fn nan_f32() -> f32 { var b = 0x7fc00000u; return bitcast<f32>(b); }
fn inf_f32() -> f32 { var b = 0x7f800000u; return bitcast<f32>(b); }
)WGSL";

}  // namespace kiln::wgpu
