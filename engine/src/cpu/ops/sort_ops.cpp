// sort_with_indices of the Cpu backend (the primitive under sort, argsort and topk).
//
// Stable along any dim (torch.sort(stable=True)): equal values keep their original order in
// both directions; nan sorts last ascending and first descending (torch treats nan as the
// largest value); -0.0 and 0.0 are equal. Indices are I32.
// Each line along dim is copied into a buffer of (value, index) pairs, sorted with
// std::sort under a comparator that breaks ties by index (stable, and no merge buffer per
// line as std::stable_sort would allocate), then written back. nans are placed first or
// last while copying, in index order, so the comparator needs no nan test.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include "cpu/ops/reduce_checks.hpp"
#include "kiln/cpu/cpu.hpp"

namespace kiln {
namespace {

template <class T>
struct Entry {
  T value;
  std::int32_t index;
};

template <class T>
void sort_lines(const CpuTensor& x, std::size_t d, bool descending, CpuTensor& values,
                CpuTensor& indices) {
  const Shape& s = x.shape();
  std::size_t outer = 1, inner = 1;
  for (std::size_t i = 0; i < d; ++i) outer *= static_cast<std::size_t>(s[i]);
  for (std::size_t i = d + 1; i < s.rank(); ++i) inner *= static_cast<std::size_t>(s[i]);
  const auto n = static_cast<std::size_t>(s[d]);
  const T* src = x.data<T>();
  T* dst = values.data<T>();
  std::int32_t* idx = indices.data<std::int32_t>();
  std::vector<Entry<T>> line(n);
  for (std::size_t o = 0; o < outer; ++o) {
    for (std::size_t i = 0; i < inner; ++i) {
      const std::size_t base = o * n * inner + i;
      // nan last ascending, first descending, each group in index order (so the sort below
      // only sees the non-nan range and needs no nan test).
      auto begin = line.begin();
      auto end = line.end();
      if constexpr (std::is_floating_point_v<T>) {
        std::size_t numbers = 0;
        for (std::size_t k = 0; k < n; ++k) numbers += src[base + k * inner] == src[base + k * inner];
        std::size_t front = descending ? n - numbers : 0;  // next slot for a number
        std::size_t back = descending ? 0 : numbers;       // next slot for a nan
        for (std::size_t k = 0; k < n; ++k) {
          const T v = src[base + k * inner];
          line[v == v ? front++ : back++] = {v, static_cast<std::int32_t>(k)};
        }
        if (descending) {
          begin += static_cast<std::ptrdiff_t>(n - numbers);
        } else {
          end = begin + static_cast<std::ptrdiff_t>(numbers);
        }
      } else {
        for (std::size_t k = 0; k < n; ++k) {
          line[k] = {src[base + k * inner], static_cast<std::int32_t>(k)};
        }
      }
      if (descending) {
        std::sort(begin, end, [](const Entry<T>& a, const Entry<T>& b) {
          return a.value > b.value || (!(b.value > a.value) && a.index < b.index);
        });
      } else {
        std::sort(begin, end, [](const Entry<T>& a, const Entry<T>& b) {
          return a.value < b.value || (!(b.value < a.value) && a.index < b.index);
        });
      }
      for (std::size_t k = 0; k < n; ++k) {
        dst[base + k * inner] = line[k].value;
        idx[base + k * inner] = line[k].index;
      }
    }
  }
}

}  // namespace

std::pair<CpuTensor, CpuTensor> CpuOps::sort_with_indices(const CpuTensor& x, std::int64_t dim,
                                                          bool descending) {
  const std::size_t d = cpu::ops::check_sort(x.dtype(), x.shape(), dim);
  CpuTensor values(x.shape(), x.dtype());
  CpuTensor indices(x.shape(), DType::I32);
  if (x.num_elements() == 0) return {values, indices};
  if (x.dtype() == DType::F32) {
    sort_lines<float>(x, d, descending, values, indices);
  } else {
    sort_lines<std::int32_t>(x, d, descending, values, indices);
  }
  return {values, indices};
}

}  // namespace kiln
