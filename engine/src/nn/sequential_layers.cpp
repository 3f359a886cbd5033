// The layer registry of nn::Sequential, filled here: the one TU that defines
// KILN_SEQUENTIAL_BACKENDS, so that each KILN_REGISTER_LAYER line of a layer header adds its
// entry to the registry and instantiates its builders for the engine's backends (Cpu and
// Autodiff<Cpu>; Cpu only in kiln-dl/inference's engine, below). The registry's order is the order in which this TU meets the
// registrations: the built-in types first, in their historical order (the order of the
// type list in messages), then every other layer of kiln/kiln.hpp in its order.
// The webgpu engine (KILN_BACKEND_WGPU, CMake KILN_WASM_BACKEND=webgpu) registers them for
// Wgpu and Autodiff<Wgpu> instead, every layer of the full engine.
// kiln-dl/inference's engine (KILN_JS_NO_AUTODIFF, CMakeLists.txt: its own copy of this TU)
// runs models on Cpu only, without autodiff.
#if defined(KILN_BACKEND_WGPU)
#define KILN_SEQUENTIAL_BACKENDS ::kiln::Wgpu, ::kiln::Autodiff<::kiln::Wgpu>
#include "kiln/wgpu/wgpu.hpp"
#elif defined(KILN_JS_NO_AUTODIFF)
#define KILN_SEQUENTIAL_BACKENDS ::kiln::Cpu
#else
#define KILN_SEQUENTIAL_BACKENDS ::kiln::Cpu, ::kiln::Autodiff<::kiln::Cpu>
#endif

#include "kiln/autodiff/autodiff.hpp"
#include "kiln/cpu/cpu.hpp"
// The registry and make_sequential_entry, which the registration lines below expand to.
#include "kiln/nn/sequential_layer.hpp"
// The built-in types in their historical order.
#include "kiln/nn/linear.hpp"
#include "kiln/nn/dropout.hpp"
#include "kiln/nn/activation.hpp"
#include "kiln/nn/reshape.hpp"
#if defined(KILN_SEQUENTIAL_CORE) && !defined(KILN_BACKEND_WGPU)
// The core engine profile (CMake KILN_WASM_PROFILE=core, dist/kiln-core.wasm): the dense
// layers only, in the same order as in the full engine (DESIGN.md "Engines"). The webgpu
// engine (core profile otherwise) registers every layer, as the full engine.
#include "kiln/nn/activation_more.hpp"
#else
#include "kiln/nn/conv2d.hpp"
#include "kiln/nn/conv1d.hpp"
#include "kiln/nn/pool.hpp"
#include "kiln/nn/batch_norm.hpp"
#include "kiln/nn/layer_norm.hpp"
// Every other public layer header: a layer registered there is registered here.
#include "kiln/kiln.hpp"
#endif

namespace kiln::nn {

SequentialRegistry& SequentialRegistry::instance() {
  static SequentialRegistry registry;
  return registry;
}

}  // namespace kiln::nn
