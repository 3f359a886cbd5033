// The harness module's Embind surface (see harness.hpp). JS (tests/webgpu/page.mjs):
//   const id = M.make(typedArray, shape, dtype)      inputs on both backends
//   const r = M.run(op, [ids], attrsJson)            {id} or {cpuError, gpuError}: {code, message}
//   M.cpuResult(id) -> {shape, dtype, data}          the Cpu backend's result
//   M.gpuBuffer(id) -> {buffer, bytes, shape, dtype} read with M.kgRead(buffer, bytes)
//   M.free(id)
#include "harness.hpp"

#include "wgpu/runtime.hpp"

#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <map>
#include <memory>
#include <optional>

namespace kiln::harness {
namespace {

using emscripten::val;

struct Entry {
  CpuFn cpu;
  GpuFn gpu;
};

std::map<std::string, Entry>& registry() {
  static std::map<std::string, Entry> r;
  return r;
}

struct Pair {
  std::optional<CpuTensor> cpu;
  std::optional<WgpuTensor> gpu;
};
std::map<int, Pair> g_pairs;
int g_next = 1;

val error_val(const char* code, const char* message) {
  val out = val::object();
  out.set("code", std::string(code));
  out.set("message", std::string(message));
  return out;
}

// Runs f, returning its result or setting out[key] to the error it threw.
template <class F>
auto attempt(F f, val& out, const char* key) -> std::optional<decltype(f())> {
  try {
    return f();
  } catch (const kiln::Error& e) {
    out.set(key, error_val(std::string(error_code_name(e.code())).c_str(), e.what()));
  } catch (const std::exception& e) {
    out.set(key, error_val("std", e.what()));
  }
  return std::nullopt;
}

val shape_val(const Shape& s) {
  val out = val::array();
  for (std::size_t i = 0; i < s.rank(); ++i) out.call<void>("push", static_cast<double>(s[i]));
  return out;
}

std::string dtype_str(DType d) { return std::string(dtype_name(d)); }

int make(val data, val shape_in, std::string dtype_name_) {
  const DType dtype = dtype_of(dtype_name_);
  std::vector<std::int64_t> dims;
  const int rank = shape_in["length"].as<int>();
  for (int i = 0; i < rank; ++i) dims.push_back(static_cast<std::int64_t>(shape_in[i].as<double>()));
  const Shape shape(dims);
  const int n = data["length"].as<int>();
  TensorData td;
  if (dtype == DType::F32) {
    std::vector<float> v(n);
    for (int i = 0; i < n; ++i) v[i] = data[i].as<float>();
    td = TensorData(shape, std::move(v));
  } else if (dtype == DType::I32) {
    std::vector<std::int32_t> v(n);
    for (int i = 0; i < n; ++i) v[i] = data[i].as<std::int32_t>();
    td = TensorData(shape, std::move(v));
  } else {
    std::vector<bool> v(n);
    for (int i = 0; i < n; ++i) v[i] = data[i].as<double>() != 0;
    td = TensorData(shape, std::move(v));
  }
  Pair p;
  p.cpu = CpuOps::from_data(td, dtype, {});
  p.gpu = WgpuOps::from_data(td, dtype, {});
  g_pairs[g_next] = std::move(p);
  return g_next++;
}

val run(std::string op, val ids, std::string attrs) {
  auto it = registry().find(op);
  if (it == registry().end()) {
    val out = val::object();
    out.set("harnessError", "no op " + op + " in the harness");
    return out;
  }
  const json a = attrs.empty() ? json::object() : json::parse(attrs);
  std::vector<CpuTensor> cin;
  std::vector<WgpuTensor> gin;
  const int n = ids["length"].as<int>();
  for (int i = 0; i < n; ++i) {
    const Pair& p = g_pairs.at(ids[i].as<int>());
    cin.push_back(*p.cpu);
    gin.push_back(*p.gpu);
  }
  val out = val::object();
  Pair result;
  result.cpu = attempt([&] { return it->second.cpu(cin, a); }, out, "cpuError");
  result.gpu = attempt([&] { return it->second.gpu(gin, a); }, out, "gpuError");
  if (result.cpu && result.gpu) {
    g_pairs[g_next] = std::move(result);
    out.set("id", g_next++);
  }
  return out;
}

val cpu_result(int id) {
  const CpuTensor& t = *g_pairs.at(id).cpu;
  val out = val::object();
  out.set("shape", shape_val(t.shape()));
  out.set("dtype", dtype_str(t.dtype()));
  const TensorData d = CpuOps::into_data(t);
  val arr = val::array();
  for (std::int64_t i = 0; i < d.num_elements(); ++i) arr.call<void>("push", d.value_as_double(static_cast<std::size_t>(i)));
  out.set("data", arr);
  return out;
}

val gpu_buffer(int id) {
  const WgpuTensor& t = *g_pairs.at(id).gpu;
  val out = val::object();
  out.set("buffer", t.buffer().id());
  out.set("bytes", static_cast<double>(t.num_bytes()));
  out.set("shape", shape_val(t.shape()));
  out.set("dtype", dtype_str(t.dtype()));
  return out;
}

void free_pair(int id) { g_pairs.erase(id); }

val ops() {
  val out = val::array();
  for (const auto& [name, _] : registry()) out.call<void>("push", name);
  return out;
}

}  // namespace

bool register_op(const std::string& name, CpuFn cpu, GpuFn gpu) {
  registry()[name] = Entry{std::move(cpu), std::move(gpu)};
  return true;
}

DType dtype_of(const std::string& name) {
  if (name == "f32") return DType::F32;
  if (name == "i32") return DType::I32;
  if (name == "bool") return DType::Bool;
  throw ValueError("harness: unknown dtype " + name);
}

EMSCRIPTEN_BINDINGS(kiln_webgpu_harness) {
  emscripten::function("make", &make);
  emscripten::function("run", &run);
  emscripten::function("cpuResult", &cpu_result);
  emscripten::function("gpuBuffer", &gpu_buffer);
  emscripten::function("free", &free_pair);
  emscripten::function("ops", &ops);
}

}  // namespace kiln::harness
