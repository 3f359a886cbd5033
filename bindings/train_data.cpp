// Datasets in JS: the Embind class RawDataset, a view (item indices) of arrays copied once
// into WebAssembly memory (fromArrays) or of MNIST's IDX bytes (mnist); shuffle, split and
// take make new views of the same arrays. The Learner gathers batches from them without any
// per-batch copy from JS.
#include <emscripten/bind.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "kiln/core/checked.hpp"
#include "kiln/data/rng.hpp"
#include "train_common.hpp"

using emscripten::val;

namespace kiln_js {

void gather_inputs(const JsDataset& data, std::size_t begin, std::size_t end, float* out) {
  const DataStore& s = *data.store;
  const auto item = static_cast<std::size_t>(s.item_size);
  const auto& index = *data.index;
  if (s.mnist) {
    // MnistBatcher's normalisation: (pixel / 255 - mean) / std.
    using Batcher = kiln::data::vision::MnistBatcher<Inner>;
    const float scale = 1.f / (255.f * Batcher::kStd);
    const float shift = -Batcher::kMean / Batcher::kStd;
    for (std::size_t i = begin; i < end; ++i, out += item) {
      const std::uint8_t* px = s.mnist->pixels(index[i]);
      for (std::size_t k = 0; k < item; ++k) out[k] = static_cast<float>(px[k]) * scale + shift;
    }
    return;
  }
  for (std::size_t i = begin; i < end; ++i, out += item) {
    std::memcpy(out, s.x.data() + static_cast<std::size_t>(index[i]) * item, item * sizeof(float));
  }
}

namespace {

const JsDataset& checked(const JsDataset& d, const char* op) {
  if (!d.store) kiln::throw_error<kiln::StateError>(op, ": the dataset was disposed");
  return d;
}

std::shared_ptr<const std::vector<std::uint32_t>> identity(std::size_t n) {
  auto index = std::make_shared<std::vector<std::uint32_t>>(n);
  std::iota(index->begin(), index->end(), 0u);
  return index;
}

std::vector<std::int64_t> dims_from_js(const val& v, const char* op, const char* what) {
  auto dims = ints_from_js(v, op, what);
  if (dims.empty() || dims.size() > 4) {
    kiln::throw_error<kiln::ShapeError>(op, ": ", what, " must have 1 to 4 dims (a batch is [n, ",
                                        what, "...], rank 2 to 5), got ", dims.size());
  }
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 1) {
      kiln::throw_error<kiln::ShapeError>(op, ": ", what, "[", i, "] must be >= 1, got ", dims[i]);
    }
  }
  return dims;
}

/// Elements of one item (or target) of shape `dims`. Throws LimitError naming `op` and
/// `what` past 2^31 - 1 (a batch of one must fit a tensor; in wasm32 a larger count would
/// wrap to 0 in size_t and divide by zero below).
std::int64_t product(const std::vector<std::int64_t>& dims, const char* op, const char* what) {
  return kiln::checked::numel(op, dims, what);
}

/// fromArrays(x: Float32Array, y: Int32Array | Float32Array, itemShape, targetShape | null,
/// numClasses (0: from the labels)).
JsDataset dataset_from_arrays(val x, val y, val item_shape, val target_shape, double num_classes) {
  return guarded([&] {
    const char* op = "data.fromArrays";
    auto store = std::make_shared<DataStore>();
    store->item_shape = dims_from_js(item_shape, op, "itemShape");
    store->item_size = product(store->item_shape, op, "itemShape");
    if (!val::global("Float32Array")["prototype"].call<bool>("isPrototypeOf", x)) {
      kiln::throw_error<kiln::TypeError>(op, ": x must be a Float32Array");
    }
    const auto nx = x["length"].as<std::size_t>();
    if (nx % static_cast<std::size_t>(store->item_size) != 0) {
      kiln::throw_error<kiln::ShapeError>(
          op, ": x has ", nx, " values, not a multiple of the item size ", store->item_size,
          " (itemShape ", kiln::Shape(store->item_shape), ")");
    }
    const std::size_t n = nx / static_cast<std::size_t>(store->item_size);
    if (n > 0xffffffffu) kiln::throw_error<kiln::LimitError>(op, ": at most 2^32 - 1 items");
    store->count = n;
    store->x.resize(nx);
    if (nx > 0) val(emscripten::typed_memory_view(nx, store->x.data())).call<void>("set", x);
    const bool int_targets = val::global("Int32Array")["prototype"].call<bool>("isPrototypeOf", y);
    const bool float_targets = val::global("Float32Array")["prototype"].call<bool>("isPrototypeOf", y);
    if (!int_targets && !float_targets) {
      kiln::throw_error<kiln::TypeError>(
          op, ": y must be an Int32Array (class labels) or a Float32Array (targets)");
    }
    const auto ny = y["length"].as<std::size_t>();
    if (int_targets) {
      if (ny != n) {
        kiln::throw_error<kiln::ShapeError>(op, ": y has ", ny, " labels but x has ", n, " items");
      }
      store->labels.resize(n);
      if (n > 0) val(emscripten::typed_memory_view(n, store->labels.data())).call<void>("set", y);
      std::int32_t max_label = -1;
      for (std::size_t i = 0; i < n; ++i) {
        if (store->labels[i] < 0) {
          kiln::throw_error<kiln::ValueError>(op, ": label ", store->labels[i], " at index ", i,
                                              " is negative");
        }
        max_label = std::max(max_label, store->labels[i]);
      }
      if (num_classes > 0) {
        if (max_label >= num_classes) {
          kiln::throw_error<kiln::ValueError>(op, ": label ", max_label,
                                              " is not below numClasses = ", num_classes);
        }
        store->num_classes = static_cast<std::int64_t>(num_classes);
      } else {
        store->num_classes = max_label + 1;
      }
    } else {
      if (target_shape.isNull() || target_shape.isUndefined()) {
        if (n == 0 || ny % n != 0) {
          kiln::throw_error<kiln::ShapeError>(op, ": y has ", ny, " values, not a multiple of the ",
                                              n, " items");
        }
        store->target_shape = {static_cast<std::int64_t>(ny / n)};
      } else {
        store->target_shape = dims_from_js(target_shape, op, "targetShape");
      }
      store->target_size = product(store->target_shape, op, "targetShape");
      // In 64 bits: n < 2^32 and target_size < 2^31, so the product cannot wrap there.
      const std::uint64_t needed =
          static_cast<std::uint64_t>(n) * static_cast<std::uint64_t>(store->target_size);
      if (static_cast<std::uint64_t>(ny) != needed) {
        kiln::throw_error<kiln::ShapeError>(op, ": y has ", ny, " values, ", n,
                                            " items of targetShape ",
                                            kiln::Shape(store->target_shape), " need ", needed);
      }
      store->targets.resize(ny);
      if (ny > 0) val(emscripten::typed_memory_view(ny, store->targets.data())).call<void>("set", y);
      if (num_classes > 0) store->num_classes = static_cast<std::int64_t>(num_classes);
    }
    return JsDataset{std::move(store), identity(n)};
  });
}

std::string_view bytes_view(const val& bytes, std::vector<std::uint8_t>& storage, const char* what) {
  if (!val::global("Uint8Array")["prototype"].call<bool>("isPrototypeOf", bytes)) {
    kiln::throw_error<kiln::TypeError>("data.mnist: ", what,
                                       " must be a Uint8Array (the IDX file's bytes)");
  }
  storage.resize(bytes["length"].as<std::size_t>());
  if (!storage.empty()) {
    val(emscripten::typed_memory_view(storage.size(), storage.data())).call<void>("set", bytes);
  }
  return {reinterpret_cast<const char*>(storage.data()), storage.size()};
}

/// mnist(imagesIdx: Uint8Array, labelsIdx: Uint8Array): 28×28 u8 images kept as they are,
/// normalised per batch as MnistBatcher; itemShape [784] (a model reshapes to [1, 28, 28]).
JsDataset dataset_mnist(val images, val labels) {
  return guarded([&] {
    std::vector<std::uint8_t> image_bytes, label_bytes;
    const auto images_view = bytes_view(images, image_bytes, "imagesIdxBytes");
    const auto labels_view = bytes_view(labels, label_bytes, "labelsIdxBytes");
    auto mnist = kiln::data::vision::MnistDataset::from_bytes(images_view, labels_view,
                                                                "imagesIdxBytes", "labelsIdxBytes");
    auto store = std::make_shared<DataStore>();
    store->count = mnist.len();
    store->item_shape = {784};
    store->item_size = 784;
    store->labels.resize(store->count);
    for (std::size_t i = 0; i < store->count; ++i) store->labels[i] = mnist.label(i);
    store->num_classes = 10;
    store->mnist = std::move(mnist);
    const std::size_t n = store->count;
    return JsDataset{std::move(store), identity(n)};
  });
}

double dataset_length(const JsDataset& d) { return static_cast<double>(d.len()); }

val dataset_item_shape(const JsDataset& d) {
  return guarded([&] { return shape_to_js(kiln::Shape(checked(d, "Dataset.itemShape").store->item_shape)); });
}

val dataset_info(const JsDataset& d) {
  return guarded([&] {
    const DataStore& s = *checked(d, "Dataset").store;
    val out = val::object();
    out.set("length", static_cast<double>(d.len()));
    out.set("itemShape", shape_to_js(kiln::Shape(s.item_shape)));
    out.set("targetShape", s.int_targets() ? val::null() : shape_to_js(kiln::Shape(s.target_shape)));
    out.set("numClasses", static_cast<double>(s.num_classes));
    out.set("targets", std::string(s.int_targets() ? "int32" : "float32"));
    return out;
  });
}

JsDataset dataset_shuffle(const JsDataset& d, double seed) {
  return guarded([&] {
    checked(d, "Dataset.shuffle");
    if (!(seed >= 0) || std::floor(seed) != seed || seed > 9007199254740991.0) {
      kiln::throw_error<kiln::ValueError>("Dataset.shuffle: seed must be an integer >= 0, got ",
                                          seed);
    }
    const auto perm = kiln::data::permutation(d.len(), static_cast<std::uint64_t>(seed));
    auto index = std::make_shared<std::vector<std::uint32_t>>(d.len());
    for (std::size_t i = 0; i < perm.size(); ++i) (*index)[i] = (*d.index)[perm[i]];
    return JsDataset{d.store, std::move(index)};
  });
}

/// Items [begin, end) of the view.
JsDataset dataset_slice(const JsDataset& d, double begin, double end) {
  return guarded([&] {
    checked(d, "Dataset.slice");
    const auto n = static_cast<double>(d.len());
    if (!(begin >= 0 && begin <= end && end <= n) || std::floor(begin) != begin ||
        std::floor(end) != end) {
      kiln::throw_error<kiln::IndexError>("Dataset.slice: [", begin, ", ", end,
                                          ") is not a range of integers within [0, ", n, "]");
    }
    auto index = std::make_shared<std::vector<std::uint32_t>>(
        d.index->begin() + static_cast<std::ptrdiff_t>(begin),
        d.index->begin() + static_cast<std::ptrdiff_t>(end));
    return JsDataset{d.store, std::move(index)};
  });
}

/// {x: Float32Array [n·item], y: Int32Array | Float32Array}: copies of the view's arrays
/// (MNIST normalised).
val dataset_to_arrays(const JsDataset& d) {
  return guarded([&] {
    const DataStore& s = *checked(d, "Dataset.toArrays").store;
    const std::size_t n = d.len();
    std::vector<float> x(n * static_cast<std::size_t>(s.item_size));
    gather_inputs(d, 0, n, x.data());
    val out = val::object();
    out.set("x", val::global("Float32Array").new_(emscripten::typed_memory_view(x.size(), x.data())));
    if (s.int_targets()) {
      std::vector<std::int32_t> y(n);
      for (std::size_t i = 0; i < n; ++i) y[i] = s.labels[(*d.index)[i]];
      out.set("y", val::global("Int32Array").new_(emscripten::typed_memory_view(y.size(), y.data())));
    } else {
      const auto t = static_cast<std::size_t>(s.target_size);
      std::vector<float> y(n * t);
      for (std::size_t i = 0; i < n; ++i) {
        std::memcpy(y.data() + i * t, s.targets.data() + (*d.index)[i] * t, t * sizeof(float));
      }
      out.set("y", val::global("Float32Array").new_(emscripten::typed_memory_view(y.size(), y.data())));
    }
    return out;
  });
}

void dataset_release(JsDataset& d) {
  d.store.reset();
  d.index.reset();
}

}  // namespace
}  // namespace kiln_js

EMSCRIPTEN_BINDINGS(kiln_train_data) {
  using namespace kiln_js;
  emscripten::class_<JsDataset>("RawDataset")
      .function("length", &dataset_length)
      .function("itemShape", &dataset_item_shape)
      .function("info", &dataset_info)
      .function("shuffle", &dataset_shuffle)
      .function("slice", &dataset_slice)
      .function("toArrays", &dataset_to_arrays)
      .function("release", &dataset_release);
  emscripten::function("datasetFromArrays", &dataset_from_arrays);
  emscripten::function("datasetMnist", &dataset_mnist);
}
