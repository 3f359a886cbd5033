#pragma once
// `call_apart<F>(args...)`: a call to F that stays a call to a function of its own in the
// WebAssembly build, for the switches that run one of many ops by a run-time op code (the
// rows of kiln/backend/ops.def, the reductions, the backward rules).
//
// Why: the page's engine is split by binaryen's profile-guided wasm-split into a primary
// module (the functions a profiled workload ran) and a deferred one; it moves whole
// functions. An op's kernel or rule inlined into the switch stays in the primary with every
// other op of that switch as soon as one of them runs. `[[gnu::noinline]]` is not enough:
// the link's wasm-opt -O3 inlines every function that has a single caller whatever its size
// (binaryen 108's "one caller" rule; it knows no noinline), and each per-op function has
// exactly one, the switch's case. A function whose address is in the table is not inlined
// that way, and a call through a pointer the optimisers cannot see through (a volatile
// constant) is never inlined at all.
//
// Cost in WebAssembly: one load and one call_indirect per call (nanoseconds; the callers run
// an op). Natively F is called directly, as if written `F(args...)`: same code as before.
#include <utility>

namespace kiln::detail {

/// Calls F(args...) (F a function, or a pointer to one), out of line in WebAssembly.
template <auto F, class... Args>
inline decltype(auto) call_apart(Args&&... args) {
#if defined(__EMSCRIPTEN__)
  static const volatile auto f = F;
  return f(std::forward<Args>(args)...);
#else
  return F(std::forward<Args>(args)...);
#endif
}

}  // namespace kiln::detail
