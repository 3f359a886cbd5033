// Minimal Embind surface of the foundation issue (the full JS API is a later issue):
// a dynamic-rank `Tensor` (rank 1..4, Float) with shape / matmul / softmax / add /
// toArray, plus simdArch() and memory(). Declared for TypeScript in bindings/js/index.d.ts.
//
// Errors: every bound entry point catches kiln::Error and std::exception and throws a JS
// `Error` with the same message and a `code` (kiln::error_code_name: "Shape", "Index", ...),
// so JS never sees a bare WebAssembly.Exception, and the module keeps working afterwards.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <cmath>
#include <cstdint>
#include <exception>
#include <new>
#include <string>
#include <utility>
#include <variant>

#include "kiln/kiln.hpp"

using emscripten::val;

namespace {

using kiln::Cpu;
template <std::size_t D>
using FloatTensor = kiln::Tensor<Cpu, D>;
using AnyTensor = std::variant<FloatTensor<1>, FloatTensor<2>, FloatTensor<3>, FloatTensor<4>>;
constexpr std::size_t kMaxRank = 4;

/// Runs `f`; a C++ exception becomes a JS Error with `.code`. The JS throw happens after
/// the C++ exception is fully handled (outside the catch block), so nothing is leaked.
template <class F>
auto guarded(F&& f) -> decltype(f()) {
  std::string code;
  std::string message;
  try {
    return f();
  } catch (const kiln::Error& e) {
    code = kiln::error_code_name(e.code());
    message = e.what();
  } catch (const std::bad_alloc&) {
    code = kiln::error_code_name(kiln::ErrorCode::OutOfMemory);
    message = "out of memory (WebAssembly heap exhausted)";
  } catch (const std::exception& e) {
    code = "Internal";
    message = e.what();
  }
  val error = val::global("Error").new_(message);
  error.set("code", code);
  error.throw_();
}

[[noreturn]] void throw_type_error(const std::string& message) { throw kiln::TypeError(message); }

bool is_integer(const val& v) {
  return v.typeOf().as<std::string>() == "number" &&
         val::global("Number").call<bool>("isInteger", v);
}

/// A JS array of non-negative integers -> Shape. Throws TypeError / RankError.
kiln::Shape shape_from_js(const val& shape) {
  if (!val::global("Array").call<bool>("isArray", shape)) {
    throw_type_error("Tensor: shape must be an array of integers, got " +
                     shape.typeOf().as<std::string>());
  }
  const auto rank = shape["length"].as<std::size_t>();
  if (rank < 1 || rank > kMaxRank) {
    throw kiln::RankError(kiln::str_cat("Tensor: rank must be 1 to ", kMaxRank,
                                        " in JS for now, got shape of rank ", rank));
  }
  std::vector<std::int64_t> dims(rank);
  for (std::size_t i = 0; i < rank; ++i) {
    const val d = shape[i];
    if (!is_integer(d) || d.as<double>() < 0 || d.as<double>() > 2147483647.0) {
      throw_type_error(kiln::str_cat("Tensor: shape[", i,
                                     "] must be an integer in [0, 2^31 - 1], got ",
                                     val::global("String")(d).as<std::string>()));
    }
    dims[i] = static_cast<std::int64_t>(d.as<double>());
  }
  return kiln::Shape(dims);
}

template <std::size_t D = 1>
AnyTensor wrap(kiln::CpuTensor primitive) {
  if constexpr (D > kMaxRank) {
    throw kiln::RankError(
        kiln::str_cat("Tensor: rank ", primitive.shape().rank(), " is not supported in JS"));
  } else {
    if (primitive.shape().rank() == D) return FloatTensor<D>(std::move(primitive));
    return wrap<D + 1>(std::move(primitive));
  }
}

/// The JS `Tensor`: a Float tensor of rank 1..4 (the rank is a run-time value in JS).
class JsTensor {
 public:
  explicit JsTensor(AnyTensor t) : t_(std::move(t)) {}

  /// new Tensor(data: Float32Array | number[], shape: number[]). Copies data.
  static JsTensor* create(val data, val shape) {
    return guarded([&] {
      const kiln::Shape s = shape_from_js(shape);
      const bool is_f32 =
          val::global("Float32Array")["prototype"].call<bool>("isPrototypeOf", data);
      if (!is_f32 && !val::global("Array").call<bool>("isArray", data)) {
        throw_type_error("Tensor: data must be a Float32Array or an array of numbers, got " +
                         data.typeOf().as<std::string>());
      }
      const auto length = data["length"].as<double>();
      if (length != static_cast<double>(s.num_elements())) {
        throw kiln::ShapeError(kiln::str_cat("Tensor: data has ", length, " values, shape ", s,
                                             " needs ", s.num_elements()));
      }
      kiln::CpuTensor primitive(s, kiln::DType::F32);
      if (s.num_elements() > 0) {
        // A view of the fresh buffer, used at once (no allocation in between).
        val(emscripten::typed_memory_view(static_cast<std::size_t>(s.num_elements()),
                                          primitive.data<float>()))
            .call<void>("set", data);
      }
      return new JsTensor(wrap(std::move(primitive)));
    });
  }

  /// The dims, a fresh JS array.
  val shape() const {
    return guarded([&] {
      val out = val::array();
      for (auto d : current_shape()) out.call<void>("push", static_cast<double>(d));
      return out;
    });
  }
  std::size_t rank() const { return t_.index() + 1; }

  /// Matrix product over the last two dims; batch dims broadcast, a lower-rank operand
  /// gets leading dims of 1 (torch.matmul for rank >= 2).
  JsTensor matmul(const JsTensor& rhs) const {
    return guarded([&] {
      return std::visit(
          [](const auto& a, const auto& b) -> JsTensor {
            constexpr std::size_t Da = std::decay_t<decltype(a)>::rank;
            constexpr std::size_t Db = std::decay_t<decltype(b)>::rank;
            constexpr std::size_t D = Da > Db ? Da : Db;
            if constexpr (Da < 2 || Db < 2) {
              throw kiln::RankError(kiln::str_cat("matmul: both operands need rank >= 2: lhs ",
                                                  a.shape(), " vs rhs ", b.shape()));
            } else if constexpr (Da == Db) {
              return JsTensor(a.matmul(b));
            } else {
              return JsTensor(a.template unsqueeze<D>().matmul(b.template unsqueeze<D>()));
            }
          },
          t_, rhs.t_);
    });
  }

  /// Element-wise sum with NumPy broadcasting.
  JsTensor add(const JsTensor& rhs) const {
    return guarded([&] {
      return std::visit(
          [](const auto& a, const auto& b) -> JsTensor {
            constexpr std::size_t Da = std::decay_t<decltype(a)>::rank;
            constexpr std::size_t Db = std::decay_t<decltype(b)>::rank;
            constexpr std::size_t D = Da > Db ? Da : Db;
            if constexpr (Da == Db) {
              return JsTensor(a + b);
            } else {
              return JsTensor(a.template unsqueeze<D>() + b.template unsqueeze<D>());
            }
          },
          t_, rhs.t_);
    });
  }

  /// Softmax along `dim` (negative counts from the end). Throws Index for a bad dim.
  JsTensor softmax(val dim) const {
    return guarded([&] {
      if (!is_integer(dim)) {
        throw_type_error("softmax: dim must be an integer, got " +
                         val::global("String")(dim).as<std::string>());
      }
      // Past int64's range the cast would be undefined; no tensor has that many dims anyway.
      const double raw = dim.as<double>();
      if (std::abs(raw) > 1e15) {
        throw kiln::IndexError(kiln::str_cat("softmax: dim ", raw, " is out of range"));
      }
      const auto d = static_cast<std::int64_t>(raw);
      return std::visit([d](const auto& t) { return JsTensor(kiln::activation::softmax(t, d)); },
                        t_);
    });
  }

  /// The values, row-major, in a new Float32Array (a copy: views of the wasm heap go
  /// stale when memory grows).
  val to_array() const {
    return guarded([&] {
      return std::visit(
          [](const auto& t) {
            const kiln::CpuTensor& p = t.primitive();
            return val::global("Float32Array")
                .new_(emscripten::typed_memory_view(static_cast<std::size_t>(p.num_elements()),
                                                    p.template data<float>()));
          },
          t_);
    });
  }

 private:
  kiln::Shape current_shape() const {
    return std::visit([](const auto& t) { return t.shape(); }, t_);
  }

  AnyTensor t_;
};

std::string simd_arch() { return std::string(Cpu::simd_arch()); }

/// kiln::memory_stats() plus the wasm heap size, as a plain JS object.
val memory() {
  const kiln::MemoryStats s = kiln::memory_stats();
  val out = val::object();
  out.set("liveBuffers", static_cast<double>(s.live_buffers));
  out.set("liveBytes", static_cast<double>(s.live_bytes));
  out.set("totalAllocations", static_cast<double>(s.total_allocations));
  out.set("peakBytes", static_cast<double>(s.peak_bytes));
  return out;
}

}  // namespace

EMSCRIPTEN_BINDINGS(kiln) {
  emscripten::class_<JsTensor>("Tensor")
      .constructor(&JsTensor::create, emscripten::allow_raw_pointers())
      .property("shape", &JsTensor::shape)
      .property("rank", &JsTensor::rank)
      .function("matmul", &JsTensor::matmul)
      .function("add", &JsTensor::add)
      .function("softmax", &JsTensor::softmax)
      .function("toArray", &JsTensor::to_array);
  emscripten::function("simdArch", &simd_arch);
  emscripten::function("memory", &memory);
}
