// The recurrent layers' engine (engine/src/nn/rnn.cpp: weights and the LSTM/GRU time loop)
// instantiated for Wgpu and Autodiff<Wgpu>, so that the webgpu engine's lstm and gru layers run
// the Cpu backend's code on the GPU.
#include "kiln/wgpu/wgpu.hpp"
#define KILN_RNN_BACKEND Wgpu
#include "nn/rnn.cpp"
