#pragma once
// The Wgpu backend's test harness (tests/e2e/webgpu.e2e.mjs): every op runs on the Cpu and
// the Wgpu backend from the same call site, and the page compares the two results (the Cpu
// backend is the reference; its ops are checked against PyTorch by the native suite).
//
// An op case is registered once, as a generic lambda over the ops struct:
//   KILN_HARNESS_OP(add, {
//     return Ops::binary(BinaryOp::Add, in[0], in[1]);
//   })
// `Ops` is kiln::CpuOps or kiln::WgpuOps, `in` the inputs (std::vector<Ops::Tensor>), `a`
// the case's attributes (nlohmann::json, from the case's `attrs`). Ops returning two tensors
// return `pick(result, a)` (attrs.output: 0 or 1).
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/cpu/cpu.hpp"
#include "kiln/wgpu/wgpu.hpp"

namespace kiln::harness {

using json = nlohmann::json;
using CpuFn = std::function<CpuTensor(const std::vector<CpuTensor>&, const json&)>;
using GpuFn = std::function<WgpuTensor(const std::vector<WgpuTensor>&, const json&)>;

/// Registers op `name` (the cases' `op`). Returns true (for static registration).
bool register_op(const std::string& name, CpuFn cpu, GpuFn gpu);

template <class F>
bool register_generic(const std::string& name, F f) {
  return register_op(
      name, [f](const std::vector<CpuTensor>& in, const json& a) { return f(CpuOps{}, in, a); },
      [f](const std::vector<WgpuTensor>& in, const json& a) { return f(WgpuOps{}, in, a); });
}

/// As register_generic, with the backend (kiln::Cpu or kiln::Wgpu) instead of its ops struct:
/// for cases that build on the typed front end and Autodiff<B>.
template <class F>
bool register_backend_generic(const std::string& name, F f) {
  return register_op(
      name, [f](const std::vector<CpuTensor>& in, const json& a) { return f(Cpu{}, in, a); },
      [f](const std::vector<WgpuTensor>& in, const json& a) { return f(Wgpu{}, in, a); });
}

/// The tensor `a.output` (0 or 1, default 0) of a pair result.
template <class T>
T pick(std::pair<T, T> r, const json& a) {
  return a.value("output", 0) == 0 ? std::move(r.first) : std::move(r.second);
}

/// DType from the cases' names "f32", "i32", "bool".
DType dtype_of(const std::string& name);

}  // namespace kiln::harness

#define KILN_HARNESS_CAT2(a, b) a##b
#define KILN_HARNESS_CAT(a, b) KILN_HARNESS_CAT2(a, b)
#define KILN_HARNESS_OP(name, ...)                                                              \
  static const bool KILN_HARNESS_CAT(kiln_harness_op_, __LINE__) = ::kiln::harness::register_generic( \
      #name, [](auto ops_tag, const auto& in, const ::kiln::harness::json& a) {                 \
        using Ops = decltype(ops_tag);                                                          \
        (void)in;                                                                               \
        (void)a;                                                                                \
        __VA_ARGS__                                                                             \
      })

/// A case over the backend `B` (kiln::Cpu or kiln::Wgpu); `in` holds B's primitives.
#define KILN_HARNESS_BACKEND_OP(name, ...)                                                      \
  static const bool KILN_HARNESS_CAT(kiln_harness_op_, __LINE__) =                              \
      ::kiln::harness::register_backend_generic(                                                \
          #name, [](auto backend_tag, const auto& in, const ::kiln::harness::json& a) {         \
            using B = decltype(backend_tag);                                                    \
            (void)in;                                                                           \
            (void)a;                                                                            \
            __VA_ARGS__                                                                         \
          })
