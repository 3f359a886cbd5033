// The engine's decision of a JS module's load (Module.loadStateDict / loadSafetensors,
// bindings/js/module_class.ts): which of the module's parameters take which entry, under
// the load options (kiln/record/load_options.hpp: key remapping, partial loading, Burn's
// adapter), every problem in one error, and the report. JS then sets what this returns.
#include <emscripten/bind.h>

#include <string>
#include <utility>
#include <vector>

#include "js_tensor.hpp"
#include "kiln/record/load_options.hpp"
#include "kiln/record/recorder.hpp"
#include "kiln/record/safetensors.hpp"

using emscripten::val;

namespace kiln_js {
namespace {

using kiln::record::KeyPattern;
using kiln::record::LoadOptions;
using kiln::record::LoadReport;
namespace rd = kiln::record::detail;

std::vector<std::int64_t> dims_of(val array) {
  std::vector<std::int64_t> dims(array["length"].as<std::size_t>());
  for (std::size_t i = 0; i < dims.size(); ++i)
    dims[i] = static_cast<std::int64_t>(array[i].as<double>());
  return dims;
}

val js_dims(const kiln::Shape& s) {
  val out = val::array();
  for (std::size_t i = 0; i < s.rank(); ++i) out.call<void>("push", static_cast<double>(s[i]));
  return out;
}

val js_strings(const std::vector<std::string>& xs) {
  val out = val::array();
  for (const auto& x : xs) out.call<void>("push", x);
  return out;
}

/// The options JS checked (module_class.ts, loadOptions): {strict, allowPartial,
/// remap: [[pattern, replacement, ignoreCase]], linearWeights: null | [[pattern, ignoreCase]]}.
LoadOptions options_from(val o) {
  LoadOptions options =
      LoadOptions().strict(o["strict"].as<bool>()).allow_partial(o["allowPartial"].as<bool>());
  const val remap = o["remap"];
  const auto n = remap["length"].as<std::size_t>();
  for (std::size_t i = 0; i < n; ++i) {
    options = options.with_key_remapping(
        KeyPattern(remap[i][0].as<std::string>(), remap[i][2].as<bool>()),
        remap[i][1].as<std::string>());
  }
  const val linear = o["linearWeights"];
  if (!linear.isNull() && !linear.isUndefined()) {
    std::vector<KeyPattern> patterns;
    const auto m = linear["length"].as<std::size_t>();
    for (std::size_t i = 0; i < m; ++i) {
      patterns.emplace_back(linear[i][0].as<std::string>(), linear[i][1].as<bool>());
    }
    options = options.with_adapter(kiln::record::BurnAdapter(std::move(patterns)));
  }
  return options;
}

/// The report as JS sees it (module_class.ts, LoadReport).
val js_report(const LoadReport& r) {
  val out = val::object();
  out.set("applied", js_strings(r.applied));
  out.set("missing", js_strings(r.missing));
  out.set("unexpected", js_strings(r.unexpected));
  val mismatched = val::array();  // empty unless refused (then this is not returned)
  for (const auto& m : r.mismatched) mismatched.call<void>("push", m.path);
  out.set("mismatched", mismatched);
  val remapped = val::array();
  for (const auto& [from, to] : r.remapped) {
    val pair = val::array();
    pair.call<void>("push", from);
    pair.call<void>("push", to);
    remapped.call<void>("push", pair);
  }
  out.set("remapped", remapped);
  out.set("transposed", js_strings(r.transposed));
  return out;
}

/// loadPlan(expected, source, options, op) -> {assign: [[name, RawTensor], ...], report}.
///   expected: [[name, shape, dtype], ...] the module's parameters (dtype 0 float32, 1 int32,
///             2 bool), in the module's order;
///   source:   SafeTensors bytes (a Uint8Array: read strictly, problems a FormatError
///             `<op>: bytes: N problems: ...`, values converted as the C++ recorder does), or
///             [[key, RawTensor], ...] held tensors (dtype must be the parameter's; problems
///             a Shape / DType / Value error `<op>: N problems (nothing was loaded): ...`);
///   options:  as options_from.
/// The tensors returned are new handles (the caller deletes them), transposed by the adapter
/// and scalars made [1] where needed. Nothing of the module is touched here.
val load_plan(val expected, val source, val options_js, const std::string& op) {
  return guarded([&] {
    const LoadOptions options = options_from(options_js);
    std::vector<rd::LoadTarget> targets;
    const auto n = expected["length"].as<std::size_t>();
    targets.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
      const val e = expected[i];
      targets.push_back(
          rd::LoadTarget{e[0].as<std::string>(), static_cast<kiln::DType>(e[2].as<int>()),
                         e[1]["length"].as<std::size_t>(), kiln::Shape(dims_of(e[1]))});
    }
    val assign = val::array();
    auto push = [&](const std::string& name, JsTensor t) {
      val pair = val::array();
      pair.call<void>("push", name);
      pair.call<void>("push", val(std::move(t)));
      assign.call<void>("push", pair);
    };
    LoadReport report;
    if (val::global("Uint8Array")["prototype"].call<bool>("isPrototypeOf", source)) {
      std::vector<std::uint8_t> data(source["length"].as<std::size_t>());
      if (!data.empty())
        val(emscripten::typed_memory_view(data.size(), data.data())).call<void>("set", source);
      const auto file = kiln::record::read_safetensors(data, "bytes");
      data = {};
      auto values = rd::plan_record(targets, file, options, report, op, "bytes");
      for (auto& v : values) {
        push(targets[v.target].path,
             JsTensor(InnerOps::from_data(v.data, v.data.dtype, InnerDevice{})));
      }
    } else {
      const auto m = source["length"].as<std::size_t>();
      std::vector<rd::LoadEntry> entries;
      std::vector<JsTensor> held;
      entries.reserve(m);
      held.reserve(m);
      for (std::size_t i = 0; i < m; ++i) {
        held.push_back(source[i][1].as<JsTensor>());
        const kiln::DType dt = held.back().dtype();
        const auto sd = dt == kiln::DType::F32   ? kiln::record::SafetensorsDType::F32
                        : dt == kiln::DType::I32 ? kiln::record::SafetensorsDType::I32
                                                 : kiln::record::SafetensorsDType::Bool;
        entries.push_back(rd::LoadEntry{source[i][0].as<std::string>(), sd, held.back().shape()});
      }
      auto decision = rd::plan_load(targets, entries, options, rd::LoadSourceKind::Tensors);
      report = std::move(decision.report);
      try {
        rd::throw_if_refused(report, options, op, "", rd::LoadSourceKind::Tensors);
      } catch (...) {
        report.applied.clear();
        throw;
      }
      for (const auto& match : decision.matches) {
        const JsTensor& t = held[match.entry];
        if (!match.transpose && t.shape() == match.shape) {
          push(targets[match.target].path, t);
          continue;
        }
        kiln::TensorData data = InnerOps::into_data(t.primitive());
        if (match.transpose) data = rd::transpose_2d(data);
        data.shape = match.shape;
        push(targets[match.target].path,
             JsTensor(InnerOps::from_data(data, data.dtype, InnerDevice{})));
      }
    }
    val out = val::object();
    out.set("assign", assign);
    out.set("report", js_report(report));
    return out;
  });
}

}  // namespace
}  // namespace kiln_js

EMSCRIPTEN_BINDINGS(kiln_record_load) { emscripten::function("loadPlan", &kiln_js::load_plan); }
