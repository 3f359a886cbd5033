// Autodiff<Wgpu>: the backward rules of engine/src/autodiff/backward.cpp, instantiated for the Wgpu
// backend (the same rules as Autodiff<Cpu>: Burn's backend decorator).
#include "kiln/wgpu/wgpu.hpp"
#define KILN_AUTODIFF_BACKEND Wgpu
#include "autodiff/backward.cpp"
