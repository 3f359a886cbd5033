#pragma once
/// Shared by every binding TU (bindings/*.cpp): the C++ object behind a JS `Tensor`, its
/// conversions to and from the typed front end, and the error translation of bound entry
/// points. Stable interface: other TUs (nn_*.cpp) build on exactly what is declared here.
///
/// JS side: the Embind class "RawTensor" (registered once, in js_tensor.cpp) is internal;
/// the package's JS class `Tensor` (bindings/js/tensor/, TypeScript) owns one RawTensor handle and
/// unwraps/wraps it around every call (bindings/js/tensor/engine.ts: `unwrap` / `wrap`).
/// A bound function that takes or returns tensors therefore takes `const JsTensor&` and
/// returns `JsTensor` by value (Embind allocates the returned copy; the JS wrapper owns it).
///
/// Example (an nn TU):
///   JsTensor linear_forward(const Linear<AD>& l, const JsTensor& x) {
///     return guarded([&] {
///       return from_typed(l.forward(to_typed<2>(x, "Linear.forward")));
///     });
///   }
#include <emscripten/val.h>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <new>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "kiln/autodiff/autodiff.hpp"
#include "kiln/core/dtype.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/shape.hpp"
#include "kiln/core/str_cat.hpp"
#include "kiln/cpu/cpu.hpp"
#if defined(KILN_BACKEND_WGPU)
#include "kiln/wgpu/wgpu.hpp"
#endif
#include "kiln/tensor/kind.hpp"
#include "kiln/tensor/tensor.hpp"

namespace kiln_js {

/// The engine's backend: Cpu, or Wgpu in the webgpu engine (compiled with KILN_BACKEND_WGPU;
/// dist/kiln-webgpu.*). Binding code names it `Inner` (the backend under Autodiff).
#if defined(KILN_BACKEND_WGPU)
using Inner = kiln::Wgpu;
#else
using Inner = kiln::Cpu;
#endif
/// The backend the JS API's tensors live on: Autodiff<Inner>, except in kiln-dl/inference's
/// engine (KILN_JS_NO_AUTODIFF, CMakeLists.txt), whose tensors live on Inner itself and record
/// no graph: Burn runs inference on the inner backend (`model.valid()`, `B` rather than
/// `Autodiff<B>`), and so does that engine, without the autodiff code.
#if defined(KILN_JS_NO_AUTODIFF)
#define KILN_JS_AUTODIFF 0
using AD = Inner;
#else
#define KILN_JS_AUTODIFF 1
using AD = kiln::Autodiff<Inner>;
#endif
/// The backend's primitive ops and device.
using InnerOps = Inner::FloatOps;
using InnerDevice = Inner::Device;
/// The backend's primitive (any dtype).
using Prim = Inner::FloatTensor;
/// The float primitive of AD: the primitive plus its graph node (null if untracked) on
/// Autodiff<Inner>; Prim itself without autodiff.
using FloatPrim = AD::FloatTensor;
#if KILN_JS_AUTODIFF
using Gradients = AD::Gradients;
#endif

/// The primitive of a float primitive of AD (without its graph node).
inline const Prim& primitive_of(const FloatPrim& v) noexcept {
#if KILN_JS_AUTODIFF
  return v.primitive;
#else
  return v;
#endif
}

/// The C++ object behind a JS Tensor of any rank (0 to kiln::Shape::max_rank) and dtype.
/// float32 tensors live on AD (Autodiff<Cpu>: `value.node` set when tracked); int32 and bool
/// tensors keep their Cpu primitive in `value.primitive` with no node (never tracked).
struct JsTensor {
  FloatPrim value;

  JsTensor() = default;
#if KILN_JS_AUTODIFF
  /// A float tensor of Autodiff<Cpu> (tracked or not).
  explicit JsTensor(FloatPrim v) : value(std::move(v)) {}
#endif
  /// Any dtype, untracked.
  explicit JsTensor(Prim p) : value(std::move(p)) {}

  kiln::DType dtype() const noexcept { return primitive().dtype(); }
  bool is_float() const noexcept { return dtype() == kiln::DType::F32; }
  const Prim& primitive() const noexcept { return primitive_of(value); }
  const kiln::Shape& shape() const noexcept { return primitive().shape(); }
  bool is_tracked() const noexcept {
#if KILN_JS_AUTODIFF
    return value.node != nullptr;
#else
    return false;
#endif
  }
};

/// The device's name in `toString` ("Cpu", "Wgpu").
#if defined(KILN_BACKEND_WGPU)
#define KILN_JS_DEVICE_NAME "Wgpu"
#else
#define KILN_JS_DEVICE_NAME "Cpu"
#endif

/// A new primitive of `shape` and `dtype` holding the values of the JS typed array (or array)
/// `data` (length already checked; f32 from Float32Array, i32 from Int32Array, bool from
/// Uint8Array): written in place on the Cpu, uploaded on the webgpu backend.
Prim primitive_from_js(const emscripten::val& data, const kiln::Shape& shape, kiln::DType dtype);

/// The values of `p` for a synchronous read on the host. On the webgpu backend, whose reads are
/// asynchronous, only a tensor that kept the host copy it was made from (fromData) has them
/// (the JS layer allows that read for the host views of learner_loop.ts); StateError naming
/// `op` otherwise (JS: `await tensor.data()`).
template <class T>
const T* host_values(const Prim& p, const char* op) {
#if defined(KILN_BACKEND_WGPU)
  if (p.host()) return reinterpret_cast<const T*>(p.host()->bytes.data());
  kiln::throw_error<kiln::StateError>(op,
                                      ": the webgpu backend reads tensors asynchronously: use "
                                      "await tensor.data() (or tensor.array())");
#else
  (void)op;
  return p.template data<T>();
#endif
}

/// Whether ops record the autodiff graph (false inside `kiln.noGrad(fn)`). Bound ops of
/// other TUs that build graphs themselves may consult it.
bool grad_enabled() noexcept;

/// The float primitive to feed an Autodiff op: `t.value`, or its untracked copy inside
/// `kiln.noGrad(fn)` (so that no graph is recorded there).
inline FloatPrim op_input(const JsTensor& t) {
#if KILN_JS_AUTODIFF
  return grad_enabled() ? t.value : FloatPrim(t.value.primitive);
#else
  return t.value;
#endif
}

/// The JS API's scalar result (PyTorch's rank-0 `[]`, one rule for the package: whole-tensor
/// reductions, reduced losses): `t`, which holds one element (the engine's `[1]`, Burn's and
/// Kiln C++'s rule), reshaped to rank 0, graph kept (its gradient flows back as `[1]`).
JsTensor as_scalar(const JsTensor& t);

/// The kind's JS dtype name: "float32", "int32", "bool".
const char* js_dtype_name(kiln::DType dtype) noexcept;

/// Throws DTypeError `<op>: expected a <dtype> tensor, got <dtype>` unless t has `dtype`.
void check_dtype(const char* op, const JsTensor& t, kiln::DType dtype);

/// The typed tensor of rank D and kind K (Float: on Autodiff<Cpu>, graph node kept).
/// Throws: DTypeError if t's dtype is not K's, RankError if its rank is not D, both
/// naming `op`.
template <std::size_t D, class K = kiln::Float>
kiln::Tensor<AD, D, K> to_typed(const JsTensor& t, const char* op = "to_typed") {
  check_dtype(op, t, K::dtype);
  kiln::check::rank(op, D, t.shape());
  if constexpr (std::is_same_v<K, kiln::Float>) {
    return kiln::Tensor<AD, D, K>(t.value);
  } else {
    return kiln::Tensor<AD, D, K>(t.primitive());
  }
}

/// The same on the inner backend (`Tensor<Cpu, D, K>`, no graph): for gradients, data.
template <std::size_t D, class K = kiln::Float>
kiln::Tensor<Inner, D, K> to_inner_typed(const JsTensor& t, const char* op = "to_typed") {
  check_dtype(op, t, K::dtype);
  kiln::check::rank(op, D, t.shape());
  return kiln::Tensor<Inner, D, K>(t.primitive());
}

/// A JsTensor (untracked) from a typed tensor of the inner backend Cpu.
template <std::size_t D, class K>
JsTensor from_typed(const kiln::Tensor<Inner, D, K>& t) {
  return JsTensor(Prim(t.primitive()));
}
#if KILN_JS_AUTODIFF
/// A JsTensor from a typed tensor of Autodiff<Cpu> (graph node kept for Float).
template <std::size_t D, class K>
JsTensor from_typed(const kiln::Tensor<AD, D, K>& t) {
  if constexpr (std::is_same_v<K, kiln::Float>) {
    return JsTensor(t.primitive());
  } else {
    return JsTensor(Prim(t.primitive()));
  }
}
#endif

/// A JS array of dims -> Shape. Each dim an integer in [0, 2^31 - 1], at most
/// kiln::Shape::max_rank dims. Throws TypeError (not an array, non-integer dim) naming `op`
/// and the position, LimitError past max_rank.
kiln::Shape shape_from_js(const emscripten::val& shape, const char* op);
/// A JS array of integers (negative allowed: dims, axes, sizes with -1) -> int64s. Throws
/// TypeError naming `op`, `what` and the position unless every entry is a safe integer.
std::vector<std::int64_t> ints_from_js(const emscripten::val& array, const char* op,
                                       const char* what);
/// A JS number that must be an integer (a dim, a count) -> int64. Throws TypeError.
std::int64_t int_from_js(const emscripten::val& value, const char* op, const char* what);
/// A Shape -> a fresh JS array of numbers.
emscripten::val shape_to_js(const kiln::Shape& shape);

/// A message of the C++ API without the C++ types it starts with, for a JS caller whose
/// own op the binding prefixes instead: `SgdConfig::init: lr must be ...` -> `lr must be ...`
/// (leading `Name::member: ` and `NameConfig: ` tokens are dropped; the rest is kept).
std::string without_cpp_prefix(std::string_view message);

/// The error boundary (bindings/js/boundary.ts has the JS half). No exception ever
/// unwinds out of a bound entry point: with -fwasm-exceptions under Emscripten 3.1.6 a
/// throw that leaves a wasm export into JS runs no wasm code on its way out, so the shadow
/// stack pointer (__stack_pointer) keeps the frames of the call (100–900 bytes per error,
/// 1 MiB in all) and the destructors of the Embind invoker's arguments never run (a JSON
/// config std::string: the 64 bytes a caught Config error leaked). Instead `guarded` catches
/// every exception inside C++, records it in this thread's error slot and returns normally;
/// the JS wrapper of every entry point sees the slot set (`_kiln_error_pending`), takes the
/// record (`takeError`) and throws the KilnError in JS, where nothing needs unwinding.
/// Per thread (thread_local): the threaded build's calling thread has its own slot.

/// Records `code` and `message` as this thread's pending error (replacing any earlier one).
void set_pending_error(std::string_view code, const char* message) noexcept;

/// How deep this thread is in guarded calls (an inner guarded rethrows to the outer one).
int& guarded_depth() noexcept;

/// The value a failed entry point returns (the JS wrapper discards it and throws): a
/// default R, or `undefined` for emscripten::val.
template <class R>
R failed_result() {
  if constexpr (std::is_same_v<R, emscripten::val>) {
    return emscripten::val::undefined();
  } else {
    return R{};
  }
}

/// Runs `f`; a C++ exception becomes this thread's pending error, with the code and message
/// the JS KilnError will carry (kiln::Error: its code; std::bad_alloc: OutOfMemory;
/// anything else: Internal), and a placeholder result (failed_result) is returned.
/// Wrap the body of EVERY bound entry point that can throw; a guarded call inside another
/// lets its exception through to the outer one.
template <class F>
auto guarded(F&& f) -> decltype(f()) {
  using R = decltype(f());
  int& depth = guarded_depth();
  if (depth > 0) return f();
  struct Depth {
    int& d;
    explicit Depth(int& d) : d(d) { ++d; }
    ~Depth() { --d; }
  };
  try {
    Depth scope(depth);
    return f();
  } catch (const kiln::Error& e) {
    set_pending_error(kiln::error_code_name(e.code()), e.what());
  } catch (const std::bad_alloc&) {
    set_pending_error(kiln::error_code_name(kiln::ErrorCode::OutOfMemory),
                      "out of memory (the WebAssembly heap cannot grow further)");
  } catch (const std::exception& e) {
    set_pending_error("Internal", e.what());
  } catch (...) {
    // Any other C++ exception. (A JS exception thrown inside an emscripten::val operation is
    // no C++ exception and is not caught here under Emscripten 3.1.6: it leaves the export,
    // and the JS wrapper restores the stack pointer and reports it; the JS layer checks
    // arguments before they get here, so that path is a bug.)
    set_pending_error("Internal", "the engine threw an unknown C++ exception");
  }
  if constexpr (!std::is_void_v<R>) return failed_result<R>();
}

}  // namespace kiln_js
