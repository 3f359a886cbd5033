// The core of the JS tensor API: the Embind classes RawTensor (JsTensor) and RawGradients,
// creation, data out, printing, memory and backend info. The ops live in tensor_*.cpp; the
// JS class `Tensor` (bindings/js/tensor/, TypeScript) wraps all of it.
#include "js_tensor.hpp"

#include "kiln/cpu/allocation.hpp"

#include <emscripten.h>
#include <emscripten/bind.h>
#include <emscripten/heap.h>
#include <malloc.h>

#include <cctype>
#include <cmath>
#include <cstring>
#include <span>

#include "kiln/autodiff/graph.hpp"
#include "kiln/core/memory.hpp"
#include "kiln/core/tensor_data.hpp"
#include "kiln/core/thread_pool.hpp"
#include "kiln/tensor/activation.hpp"
#if defined(KILN_BACKEND_WGPU)
#include "wgpu/runtime.hpp"
#endif

using emscripten::val;

// engine/src/cpu/gemm/gemm.cpp (declared in the engine-internal cpu/gemm/gemm.hpp): whether
// the GEMM's multiply-adds were compiled to f32x4.relaxed_madd (the relaxed-SIMD build).
namespace kiln::cpu::gemm {
bool madd_is_relaxed() noexcept;
}  // namespace kiln::cpu::gemm

// Bindings run once per call from JS, not per element or per op (their work is Embind's val
// calls): optimized for size in the engine a page loads (issue 17); the op path keeps -O3.
#define KILN_JS_SIZE __attribute__((minsize))

namespace kiln_js {

namespace {
bool g_grad_enabled = true;
}  // namespace

bool grad_enabled() noexcept { return g_grad_enabled; }

JsTensor as_scalar(const JsTensor& t) {
  if (t.shape().rank() == 0) return t;
  const std::span<const std::int64_t> scalar{};
  if (t.is_float()) return JsTensor(AD::FloatOps::reshape(op_input(t), scalar));
  return JsTensor(InnerOps::reshape(t.primitive(), scalar));
}

const char* js_dtype_name(kiln::DType dtype) noexcept {
  switch (dtype) {
    case kiln::DType::F32: return "float32";
    case kiln::DType::I32: return "int32";
    case kiln::DType::Bool: return "bool";
  }
  return "?";
}

void check_dtype(const char* op, const JsTensor& t, kiln::DType dtype) {
  if (t.dtype() != dtype) {
    kiln::throw_error<kiln::DTypeError>(op, ": expected ", dtype == kiln::DType::I32 ? "an " : "a ",
                                        js_dtype_name(dtype), " tensor, got ",
                                        js_dtype_name(t.dtype()), " (shape ", t.shape(), ")");
  }
}

KILN_JS_SIZE kiln::Shape shape_from_js(const val& shape, const char* op) {
  if (!val::global("Array").call<bool>("isArray", shape)) {
    kiln::throw_error<kiln::TypeError>(op, ": shape must be an array of integers, got ",
                                       shape.typeOf().as<std::string>());
  }
  const auto rank = shape["length"].as<std::size_t>();
  if (rank > kiln::Shape::max_rank) {
    kiln::throw_error<kiln::LimitError>(op, ": at most ", kiln::Shape::max_rank,
                                        " dims are supported, got ", rank);
  }
  std::vector<std::int64_t> dims(rank);
  for (std::size_t i = 0; i < rank; ++i) {
    const val d = shape[i];
    const bool integer = d.typeOf().as<std::string>() == "number" &&
                         val::global("Number").call<bool>("isInteger", d);
    if (!integer || d.as<double>() < 0 || d.as<double>() > 2147483647.0) {
      kiln::throw_error<kiln::TypeError>(op, ": shape[", i,
                                         "] must be an integer in [0, 2^31 - 1], got ",
                                         val::global("String")(d).as<std::string>());
    }
    dims[i] = static_cast<std::int64_t>(d.as<double>());
  }
  return kiln::Shape(dims);
}

KILN_JS_SIZE std::int64_t int_from_js(const val& value, const char* op, const char* what) {
  const bool integer = value.typeOf().as<std::string>() == "number" &&
                       val::global("Number").call<bool>("isSafeInteger", value);
  if (!integer) {
    kiln::throw_error<kiln::TypeError>(op, ": ", what, " must be an integer, got ",
                                       val::global("String")(value).as<std::string>());
  }
  return static_cast<std::int64_t>(value.as<double>());
}

KILN_JS_SIZE std::vector<std::int64_t> ints_from_js(const val& array, const char* op, const char* what) {
  if (!val::global("Array").call<bool>("isArray", array)) {
    kiln::throw_error<kiln::TypeError>(op, ": ", what, " must be an array of integers, got ",
                                       array.typeOf().as<std::string>());
  }
  const auto n = array["length"].as<std::size_t>();
  if (n > 64) {
    kiln::throw_error<kiln::LimitError>(op, ": ", what, " has ", n, " entries (at most ",
                                        kiln::Shape::max_rank, " dims are supported)");
  }
  std::vector<std::int64_t> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    const val v = array[i];
    const bool integer = v.typeOf().as<std::string>() == "number" &&
                         val::global("Number").call<bool>("isSafeInteger", v);
    if (!integer) {
      kiln::throw_error<kiln::TypeError>(op, ": ", what, "[", i, "] must be an integer, got ",
                                         val::global("String")(v).as<std::string>());
    }
    out[i] = static_cast<std::int64_t>(v.as<double>());
  }
  return out;
}

KILN_JS_SIZE val shape_to_js(const kiln::Shape& shape) {
  val out = val::array();
  for (std::size_t i = 0; i < shape.rank(); ++i) out.set(i, static_cast<double>(shape[i]));
  return out;
}

KILN_JS_SIZE std::string without_cpp_prefix(std::string_view message) {
  for (;;) {
    // One leading token: [A-Z][A-Za-z0-9]* then either `::member` or a name ending in
    // "Config", then ": ".
    std::size_t i = 0;
    if (message.empty() || !(message[0] >= 'A' && message[0] <= 'Z')) break;
    while (i < message.size() && std::isalnum(static_cast<unsigned char>(message[i]))) ++i;
    const std::string_view name = message.substr(0, i);
    bool drop = name.size() > 6 && name.substr(name.size() - 6) == "Config";
    if (message.substr(i, 2) == "::") {
      i += 2;
      while (i < message.size() &&
             (std::isalnum(static_cast<unsigned char>(message[i])) || message[i] == '_')) {
        ++i;
      }
      drop = true;
    }
    if (!drop || message.substr(i, 2) != ": ") break;
    message.remove_prefix(i + 2);
  }
  return std::string(message);
}

namespace {
/// This thread's error slot (see js_tensor.hpp, "The error boundary").
struct PendingError {
  bool set = false;
  std::string code;
  std::string message;
};
thread_local PendingError t_pending;
thread_local int t_guarded_depth = 0;
}  // namespace

KILN_JS_SIZE void set_pending_error(std::string_view code, const char* message) noexcept {
  try {
    t_pending.code = code;
    t_pending.message = message;
  } catch (...) {
    // No memory for the message: the code alone still reaches JS.
    t_pending.message.clear();
  }
  t_pending.set = true;
}

int& guarded_depth() noexcept { return t_guarded_depth; }

/// The pending error as {code, message}, cleared (null if none): called by the JS wrapper
/// after an entry point returned with the slot set.
KILN_JS_SIZE val take_error() {
  if (!t_pending.set) return val::null();
  val out = val::object();
  out.set("code", t_pending.code);
  out.set("message", t_pending.message);
  t_pending.set = false;
  // Freed, not just cleared: after an error the heap is exactly where it was before it.
  std::string().swap(t_pending.code);
  std::string().swap(t_pending.message);
  return out;
}

KILN_JS_SIZE Prim primitive_from_js(const val& data, const kiln::Shape& shape, kiln::DType dtype) {
  const auto n = static_cast<std::size_t>(shape.num_elements());
  // Copies the JS values into `out` through a view used at once (no allocation in between).
  auto copy_into = [&](auto* out) { val(emscripten::typed_memory_view(n, out)).call<void>("set", data); };
#if defined(KILN_BACKEND_WGPU)
  kiln::TensorData host;
  host.shape = shape;
  host.dtype = dtype;
  host.bytes.resize(n * kiln::dtype_size(dtype));
  if (n > 0) {
    switch (dtype) {
      case kiln::DType::F32: copy_into(reinterpret_cast<float*>(host.bytes.data())); break;
      case kiln::DType::I32: copy_into(reinterpret_cast<std::int32_t*>(host.bytes.data())); break;
      case kiln::DType::Bool: copy_into(host.bytes.data()); break;
    }
  }
  return InnerOps::from_data(host, dtype, {});
#else
  Prim p(shape, dtype);
  if (n > 0) {
    switch (dtype) {
      case kiln::DType::F32: copy_into(p.data<float>()); break;
      case kiln::DType::I32: copy_into(p.data<std::int32_t>()); break;
      case kiln::DType::Bool: copy_into(p.data<std::uint8_t>()); break;
    }
  }
  return p;
#endif
}

namespace {

kiln::DType dtype_from_int(int dtype) {
  switch (dtype) {
    case 0: return kiln::DType::F32;
    case 1: return kiln::DType::I32;
    case 2: return kiln::DType::Bool;
    default:
      kiln::throw_error<kiln::TypeError>("dtype: unknown dtype code ", dtype);
  }
}

const char* typed_array_name(kiln::DType dtype) {
  switch (dtype) {
    case kiln::DType::F32: return "Float32Array";
    case kiln::DType::I32: return "Int32Array";
    case kiln::DType::Bool: return "Uint8Array";
  }
  return "Uint8Array";
}

// ---- RawTensor accessors
int raw_dtype(const JsTensor& t) { return static_cast<int>(t.dtype()); }
val raw_shape(const JsTensor& t) { return shape_to_js(t.shape()); }
int raw_rank(const JsTensor& t) { return static_cast<int>(t.shape().rank()); }
double raw_numel(const JsTensor& t) { return static_cast<double>(t.primitive().num_elements()); }
double raw_bytes(const JsTensor& t) { return static_cast<double>(t.primitive().num_bytes()); }
bool raw_is_tracked(const JsTensor& t) { return t.is_tracked(); }
#if KILN_JS_AUTODIFF
double gradients_size(const Gradients& g) { return static_cast<double>(g.size()); }
#endif

// ---- creation

/// data: a typed array of the dtype's JS type (Float32Array, Int32Array, Uint8Array of
/// 0/1) with shape's product of elements (the package's JS layer converts anything else).
KILN_JS_SIZE JsTensor from_typed_array(val data, val shape, int dtype_code) {
  return guarded([&] {
    const kiln::DType dtype = dtype_from_int(dtype_code);
    const kiln::Shape s = shape_from_js(shape, "fromData");
    const auto length = data["length"].as<double>();
    if (length != static_cast<double>(s.num_elements())) {
      kiln::throw_error<kiln::ShapeError>("fromData: data has ", length, " values, shape ", s,
                                          " needs ", s.num_elements());
    }
    kiln::cpu::check_allocation("fromData", s, dtype);
    Prim p = primitive_from_js(data, s, dtype);
    return JsTensor(std::move(p));
  });
}

/// op: the JS factory's name for messages (zeros, ones, full, zerosLike, ...).
KILN_JS_SIZE JsTensor create_full(val shape, double value, int dtype_code, const std::string& op) {
  return guarded([&] {
    const kiln::DType dtype = dtype_from_int(dtype_code);
    const kiln::Shape s = shape_from_js(shape, op.c_str());
    kiln::cpu::check_allocation(op, s, dtype);
    return JsTensor(InnerOps::full(s, value, dtype, {}));
  });
}

/// kind: 0 default uniform [0, 1), 1 uniform [a, b), 2 normal(a, b), 3 bernoulli(a).
/// op: the JS factory's name for messages (random, randomLike).
JsTensor create_random(val shape, int kind, double a, double b, int dtype_code,
                       const std::string& op) {
  return guarded([&] {
    const kiln::DType dtype = dtype_from_int(dtype_code);
    const kiln::Shape s = shape_from_js(shape, op.c_str());
    kiln::cpu::check_allocation(op, s, dtype);
    kiln::Distribution d;
    switch (kind) {
      case 0: break;
      case 1: d = kiln::Distribution::uniform(a, b); break;
      case 2: d = kiln::Distribution::normal(a, b); break;
      case 3: d = kiln::Distribution::bernoulli(a); break;
      default:
        kiln::throw_error<kiln::TypeError>(op, ": unknown distribution code ", kind);
    }
    return JsTensor(InnerOps::random(s, d, dtype, {}));
  });
}

KILN_JS_SIZE JsTensor create_arange(double start, double end, double step, int dtype_code) {
  return guarded([&] {
    return JsTensor(InnerOps::arange(start, end, step, dtype_from_int(dtype_code), {}));
  });
}

KILN_JS_SIZE JsTensor create_eye(double n, double m, int dtype_code) {
  return guarded([&] {
    for (double v : {n, m}) {
      if (!(v >= 0 && v <= 2147483647.0) || std::floor(v) != v) {
        kiln::throw_error<kiln::ValueError>("eye: sizes must be integers >= 0, got ", v);
      }
    }
    kiln::cpu::check_allocation(
        "eye", kiln::Shape{static_cast<std::int64_t>(n), static_cast<std::int64_t>(m)},
        dtype_from_int(dtype_code));
    return JsTensor(InnerOps::eye(static_cast<std::int64_t>(n), static_cast<std::int64_t>(m),
                                      dtype_from_int(dtype_code), {}));
  });
}

KILN_JS_SIZE void set_seed(double s) {
  guarded([&] {
    if (!(s >= 0) || std::floor(s) != s || s > 9007199254740991.0) {
      kiln::throw_error<kiln::ValueError>("seed: expected an integer >= 0, got ", s);
    }
    Inner::seed(static_cast<std::uint64_t>(s));
  });
}

// ---- data out

/// The values in a new typed array (a copy: views of the wasm heap go stale on growth).
val data_sync(const JsTensor& t) {
  return guarded([&] {
    const Prim& p = t.primitive();
    const auto n = static_cast<std::size_t>(p.num_elements());
    val ctor = val::global(typed_array_name(p.dtype()));
    if (n == 0) return ctor.new_(0);
    switch (p.dtype()) {
      case kiln::DType::F32:
        return ctor.new_(emscripten::typed_memory_view(n, host_values<float>(p, "dataSync")));
      case kiln::DType::I32:
        return ctor.new_(emscripten::typed_memory_view(n, host_values<std::int32_t>(p, "dataSync")));
      case kiln::DType::Bool:
        return ctor.new_(emscripten::typed_memory_view(n, host_values<std::uint8_t>(p, "dataSync")));
    }
    return ctor.new_(0);
  });
}

/// Burn's Display of the tensor; precision < 0: shortest round-trip form.
KILN_JS_SIZE std::string to_string(const JsTensor& t, int precision) {
  return guarded([&] {
    std::string out;
    const kiln::TensorData data = InnerOps::into_data(t.primitive());
    const char* kind = t.dtype() == kiln::DType::F32   ? "Float"
                       : t.dtype() == kiln::DType::I32 ? "Int"
                                                       : "Bool";
    const std::string backend = t.is_float() ? std::string(AD::name()) : "cpu";
    kiln::detail::append_tensor(out, data, KILN_JS_DEVICE_NAME, backend, kind, precision);
    return out;
  });
}

// ---- autodiff mode

void set_grad_enabled(bool enabled) { g_grad_enabled = enabled; }
bool is_grad_enabled() { return g_grad_enabled; }

// ---- module info

KILN_JS_SIZE val memory() {
  const kiln::MemoryStats s = kiln::memory_stats();
  const struct mallinfo mi = mallinfo();
  val out = val::object();
  out.set("bytes", static_cast<double>(s.live_bytes));
  out.set("buffers", static_cast<double>(s.live_buffers));
  out.set("peakBytes", static_cast<double>(s.peak_bytes));
  out.set("totalAllocations", static_cast<double>(s.total_allocations));
  out.set("heapBytes", static_cast<double>(emscripten_get_heap_size()));
  out.set("mallocBytes", static_cast<double>(mi.uordblks));
  out.set("graphNodes", static_cast<double>(kiln::autodiff::live_nodes()));
#if defined(KILN_BACKEND_WGPU)
  // The webgpu engine's tensors live in device buffers (the fields above count host memory).
  const kiln::wgpu::DeviceMemory d = kiln::wgpu::device_memory();
  out.set("gpuBytes", static_cast<double>(d.live_bytes));
  out.set("gpuBuffers", static_cast<double>(d.live_buffers));
  out.set("gpuPeakBytes", static_cast<double>(d.peak_bytes));
#endif
  return out;
}

/// kiln::set_num_threads (the JS layer checks n against the Web Workers the threaded build
/// started: bindings/js/index.ts).
void set_num_threads(int n) {
  guarded([&] { kiln::set_num_threads(n); });
}

KILN_JS_SIZE val backend_info() {
  val out = val::object();
  const std::string arch(kiln::Cpu::simd_arch());
  out.set("simd", arch != "scalar" && !arch.empty());
  out.set("threads", kiln::num_threads());
  out.set("arch", arch);
#if defined(KILN_BACKEND_WGPU)
  out.set("build", std::string("webgpu"));  // the kernels are WGSL; simd/arch: the host side
#elif defined(__EMSCRIPTEN_PTHREADS__)
  out.set("build", std::string(kiln::cpu::gemm::madd_is_relaxed() ? "simd-threads-relaxed" : "simd-threads"));
#else
  out.set("build", std::string(kiln::cpu::gemm::madd_is_relaxed() ? "simd-relaxed" : "simd"));
#endif
  out.set("backend", std::string(AD::name()));
  return out;
}

// ---- a check of the header's conversions (internal; tests/js/autodiff.test.mjs)

/// relu of a rank-2 float32 tensor through to_typed/from_typed (the graph node must
/// survive both ways), or the int32 rank-1 identity through the Int conversions.
JsTensor typed_round_trip(const JsTensor& x, bool as_int) {
  return guarded([&] {
    if (as_int) return from_typed(to_typed<1, kiln::Int>(x, "typedRoundTrip"));
    return from_typed(kiln::activation::relu(to_typed<2>(x, "typedRoundTrip")));
  });
}

/// The inner (Cpu) conversion: 2·x of a rank-2 float32 tensor, untracked.
JsTensor inner_round_trip(const JsTensor& x) {
  return guarded([&] { return from_typed(to_inner_typed<2>(x, "innerRoundTrip") * 2.f); });
}

}  // namespace
}  // namespace kiln_js

EMSCRIPTEN_BINDINGS(kiln_tensor_core) {
  using namespace kiln_js;
  using emscripten::function;
  emscripten::class_<JsTensor>("RawTensor")
      .function("dtype", &raw_dtype)
      .function("shape", &raw_shape)
      .function("rank", &raw_rank)
      .function("numel", &raw_numel)
      .function("bytes", &raw_bytes)
      .function("isTracked", &raw_is_tracked);
#if KILN_JS_AUTODIFF  // kiln-dl/inference's engine records no graph (js_tensor.hpp)
  emscripten::class_<Gradients>("RawGradients").function("size", &gradients_size);
#endif

  function("tFromTypedArray", &from_typed_array);
  function("tFull", &create_full);
  function("tRandom", &create_random);
  function("tArange", &create_arange);
  function("tEye", &create_eye);
  function("seed", &set_seed);
  function("tDataSync", &data_sync);
  function("tToString", &to_string);
  function("setGradEnabled", &set_grad_enabled);
  function("isGradEnabled", &is_grad_enabled);
  function("memoryStats", &memory);
  function("backendInfo", &backend_info);
  function("setNumThreads", &set_num_threads);
  function("_typedRoundTrip", &typed_round_trip);
  function("_innerRoundTrip", &inner_round_trip);
  function("takeError", &take_error);
}

/// 1 if the last guarded entry point on this thread failed (its error not yet taken): the
/// JS wrapper's check after every call, a plain wasm export (no Embind marshalling).
extern "C" EMSCRIPTEN_KEEPALIVE int kiln_error_pending() { return kiln_js::t_pending.set ? 1 : 0; }
