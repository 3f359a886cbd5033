// Creation, data transfer and casts of the Cpu backend; the seeded generator of random().
#include <cmath>
#include <cstring>
#include <limits>
#include <mutex>

#include "cpu/parallel_plan.hpp"
#include "kiln/cpu/cpu.hpp"

namespace kiln {
namespace {

// xoshiro256** seeded through splitmix64: fast, and unlike std::*_distribution it gives
// the same stream with libstdc++ (native) and libc++ (WASM).
class Rng {
 public:
  explicit Rng(std::uint64_t seed) { reseed(seed); }
  void reseed(std::uint64_t seed) {
    for (auto& s : state_) {
      seed += 0x9E3779B97F4A7C15ull;
      std::uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
      s = z ^ (z >> 31);
    }
  }
  std::uint64_t next() {
    const std::uint64_t result = rotl(state_[1] * 5, 7) * 9;
    const std::uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = rotl(state_[3], 45);
    return result;
  }
  /// Uniform double in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t state_[4]{};
};

std::mutex g_rng_mutex;
Rng g_rng(0x4B494C4Eull);  // "KILN"

/// One normal sample (Box-Muller; 1 - u keeps the log argument in (0, 1]). Out of line so
/// that log, cos and their tables (libc's __log_data, __rem_pio2_large: ~7 KB of data) stay
/// out of random()'s uniform path: wasm-split then leaves them to the deferred module on a
/// page that only builds layers with uniform initializers (issue 17). Called from two places
/// (random()'s f32 loop and its sample()), so binaryen's link-time inlining, which ignores
/// noinline and always inlines a function with one caller, leaves it out of line too.
[[gnu::noinline]] double normal_sample(Rng& rng, double mean, double stddev) {
  const double u1 = 1.0 - rng.uniform();
  const double u2 = rng.uniform();
  return mean + stddev * std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

void check_finite(const char* op, double v, const char* what) {
  if (!std::isfinite(v)) throw_error<ValueError>(op, ": ", what, " must be finite, got ", v);
}

template <class T>
void fill(CpuTensor& t, T value) {
  T* p = t.data<T>();
  // Split across the thread pool when large (gradient buffers are zero-filled every step).
  cpu::parallel_elements(t.num_elements(), [&](std::int64_t begin, std::int64_t end) {
    std::fill(p + begin, p + end, value);
  });
}

}  // namespace

Distribution Distribution::uniform(double low, double high) {
  check_finite("Distribution::uniform", low, "low");
  check_finite("Distribution::uniform", high, "high");
  if (!(low < high)) {
    throw_error<ValueError>("Distribution::uniform: expected low < high, got low = ", low,
                            ", high = ", high);
  }
  return {Kind::Uniform, low, high};
}

Distribution Distribution::normal(double mean, double std) {
  check_finite("Distribution::normal", mean, "mean");
  check_finite("Distribution::normal", std, "std");
  if (std < 0) throw_error<ValueError>("Distribution::normal: std must be >= 0, got ", std);
  return {Kind::Normal, mean, std};
}

Distribution Distribution::bernoulli(double p) {
  if (!(p >= 0.0 && p <= 1.0)) {
    throw_error<ValueError>("Distribution::bernoulli: p must be in [0, 1], got ", p);
  }
  return {Kind::Bernoulli, p, 0.0};
}

void Cpu::seed(std::uint64_t seed) {
  std::lock_guard lock(g_rng_mutex);
  g_rng.reseed(seed);
}

CpuTensor CpuOps::from_data(const TensorData& data, DType dtype, const CpuDevice&) {
  const TensorData& src = data;
  const auto expected =
      static_cast<std::size_t>(src.shape.num_elements()) * dtype_size(src.dtype);
  if (src.bytes.size() != expected) {
    throw_error<ShapeError>("from_data: shape ", src.shape, " of ", src.dtype, " needs ", expected,
                            " bytes, the data holds ", src.bytes.size());
  }
  CpuTensor out(src.shape, dtype);
  if (src.dtype == dtype) {
    if (expected) std::memcpy(out.data<std::uint8_t>(), src.bytes.data(), expected);
  } else {
    const TensorData converted = src.convert(dtype);
    if (out.num_bytes()) std::memcpy(out.data<std::uint8_t>(), converted.bytes.data(), out.num_bytes());
  }
  return out;
}

TensorData CpuOps::into_data(const CpuTensor& x) {
  const std::uint8_t* src = x.data<std::uint8_t>();  // throws for a moved-from handle
  std::vector<std::uint8_t> bytes(x.num_bytes());
  if (!bytes.empty()) std::memcpy(bytes.data(), src, bytes.size());
  return TensorData(x.shape(), x.dtype(), std::move(bytes));
}

CpuTensor CpuOps::full(const Shape& shape, double value, DType dtype, const CpuDevice&) {
  CpuTensor out(shape, dtype);
  switch (dtype) {
    case DType::F32: fill(out, static_cast<float>(value)); break;
    case DType::I32:
      if (!(value >= -2147483648.0 && value <= 2147483647.0)) {
        throw_error<ValueError>("full: value ", value, " does not fit in i32");
      }
      fill(out, static_cast<std::int32_t>(value));
      break;
    case DType::Bool: fill(out, static_cast<std::uint8_t>(value != 0.0)); break;
  }
  return out;
}

CpuTensor CpuOps::random(const Shape& shape, const Distribution& dist, DType dtype,
                         const CpuDevice&) {
  CpuTensor out(shape, dtype);
  const std::int64_t n = out.num_elements();
  std::lock_guard lock(g_rng_mutex);
  auto sample = [&]() -> double {
    switch (dist.kind) {
      case Distribution::Kind::Default: return g_rng.uniform();
      case Distribution::Kind::Uniform: return dist.a + (dist.b - dist.a) * g_rng.uniform();
      case Distribution::Kind::Bernoulli: return g_rng.uniform() < dist.a ? 1.0 : 0.0;
      case Distribution::Kind::Normal: return normal_sample(g_rng, dist.a, dist.b);
    }
    return 0.0;
  };
  switch (dtype) {
    case DType::F32: {
      float* p = out.data<float>();
      const bool bounded = dist.kind == Distribution::Kind::Uniform ||
                           dist.kind == Distribution::Kind::Default;
      if (dist.kind == Distribution::Kind::Normal) {
        for (std::int64_t i = 0; i < n; ++i) p[i] = static_cast<float>(normal_sample(g_rng, dist.a, dist.b));
        break;
      }
      for (std::int64_t i = 0; i < n; ++i) {
        float v = static_cast<float>(sample());
        // Rounding to f32 may reach the excluded upper bound; stay inside [low, high).
        if (bounded && v >= static_cast<float>(dist.b)) {
          v = std::nextafter(static_cast<float>(dist.b), -INFINITY);
          if (v < static_cast<float>(dist.a)) v = static_cast<float>(dist.a);  // tiny range
        }
        p[i] = v;
      }
      break;
    }
    case DType::I32: {
      if (dist.kind == Distribution::Kind::Uniform &&
          !(dist.a >= -2147483648.0 && dist.b <= 2147483648.0)) {
        throw_error<ValueError>("random: an Int uniform range must lie within i32, got [", dist.a,
                                ", ", dist.b, ")");
      }
      std::int32_t* p = out.data<std::int32_t>();
      for (std::int64_t i = 0; i < n; ++i) {
        const double v = std::floor(sample());
        if (!(v >= -2147483648.0 && v < 2147483648.0)) {
          throw_error<ValueError>("random: a sample ", v,
                                  " of the distribution does not fit in i32");
        }
        p[i] = static_cast<std::int32_t>(v);
      }
      break;
    }
    case DType::Bool: {
      std::uint8_t* p = out.data<std::uint8_t>();
      const double prob = dist.kind == Distribution::Kind::Bernoulli ? dist.a : 0.5;
      for (std::int64_t i = 0; i < n; ++i) p[i] = g_rng.uniform() < prob;
      break;
    }
  }
  return out;
}

CpuTensor CpuOps::arange(double start, double end, double step, DType dtype, const CpuDevice&) {
  if (step == 0.0 || !std::isfinite(step) || !std::isfinite(start) || !std::isfinite(end)) {
    throw_error<ValueError>("arange: expected finite start, end and a non-zero step, got start ",
                            start, ", end ", end, ", step ", step);
  }
  const double count = std::ceil((end - start) / step);
  if (count > static_cast<double>(std::numeric_limits<std::int32_t>::max())) {
    throw_error<LimitError>("arange: ", count, " elements exceed the limit");
  }
  const auto n = static_cast<std::int64_t>(std::max(0.0, count));
  CpuTensor out(Shape{n}, dtype);
  if (dtype == DType::F32) {
    float* p = out.data<float>();
    for (std::int64_t i = 0; i < n; ++i) p[i] = static_cast<float>(start + step * static_cast<double>(i));
  } else if (dtype == DType::I32) {
    const double last = start + step * static_cast<double>(n > 0 ? n - 1 : 0);
    if (n > 0 && !(std::min(start, last) >= -2147483648.0 && std::max(start, last) <= 2147483647.0)) {
      throw_error<ValueError>("arange: values from ", start, " to ", last, " do not fit in i32");
    }
    std::int32_t* p = out.data<std::int32_t>();
    for (std::int64_t i = 0; i < n; ++i) {
      p[i] = static_cast<std::int32_t>(start + step * static_cast<double>(i));
    }
  } else {
    throw_error<DTypeError>("arange: expected dtype f32 or i32, got bool");
  }
  return out;
}

CpuTensor CpuOps::eye(std::int64_t n, std::int64_t m, DType dtype, const CpuDevice& device) {
  if (n < 0 || m < 0) throw_error<ValueError>("eye: size must be >= 0, got ", n, " x ", m);
  CpuTensor out = full(Shape{n, m}, 0.0, dtype, device);
  for (std::int64_t i = 0; i < std::min(n, m); ++i) {
    switch (dtype) {
      case DType::F32: out.data<float>()[i * m + i] = 1.f; break;
      case DType::I32: out.data<std::int32_t>()[i * m + i] = 1; break;
      case DType::Bool: out.data<std::uint8_t>()[i * m + i] = 1; break;
    }
  }
  return out;
}

CpuTensor CpuOps::cast(CpuTensor x, DType to) {
  if (x.dtype() == to) return x;
  CpuTensor out(x.shape(), to);
  const std::int64_t n = x.num_elements();
  auto convert = [&](auto* dst) {
    using T = std::remove_pointer_t<decltype(dst)>;
    auto run = [&](const auto* src) {
      for (std::int64_t i = 0; i < n; ++i) {
        if constexpr (std::is_same_v<T, std::uint8_t>) {
          dst[i] = src[i] != 0;
        } else {
          dst[i] = static_cast<T>(src[i]);
        }
      }
    };
    switch (x.dtype()) {
      case DType::F32: {
        if constexpr (std::is_same_v<T, std::int32_t>) {
          const float* src = x.data<float>();
          for (std::int64_t i = 0; i < n; ++i) {
            if (!(src[i] > -2147483649.f && src[i] < 2147483648.f)) {
              throw_error<ValueError>("int: element ", i, " = ", src[i],
                                      " is not representable as i32");
            }
            dst[i] = static_cast<std::int32_t>(src[i]);
          }
        } else {
          run(x.data<float>());
        }
        break;
      }
      case DType::I32: run(x.data<std::int32_t>()); break;
      case DType::Bool: run(x.data<std::uint8_t>()); break;
    }
  };
  switch (to) {
    case DType::F32: convert(out.data<float>()); break;
    case DType::I32: convert(out.data<std::int32_t>()); break;
    case DType::Bool: convert(out.data<std::uint8_t>()); break;
  }
  return out;
}

}  // namespace kiln
