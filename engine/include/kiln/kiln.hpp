#pragma once
/// Kiln: everything public, in one include.
#include "kiln/backend/backend.hpp"
#include "kiln/core/device.hpp"
#include "kiln/core/dtype.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/memory.hpp"
#include "kiln/core/shape.hpp"
#include "kiln/core/str_cat.hpp"
#include "kiln/core/tensor_data.hpp"
#include "kiln/cpu/cpu.hpp"
#include "kiln/tensor/activation.hpp"
#include "kiln/tensor/kind.hpp"
#include "kiln/tensor/tensor.hpp"
