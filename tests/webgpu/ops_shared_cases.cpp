// The shared PyTorch reference cases (tests/native/cases/{cases,round2}.jsonl, format in its
// README.md) on the Wgpu backend (issue 21: "../shared/cases pass on Wgpu as on Cpu"), and on
// the Cpu backend beside it. The page (tests/webgpu/cases_shared.mjs) fetches the two files
// from the served tree, hands each record to `runSharedCase(id, recordJson)` and compares every
// returned tensor with the record's `expected` values and `tolerance` (the reference is the
// case file, not the Cpu backend).
//
// Each case is a function template over the backend B (kiln::Cpu or kiln::Wgpu) building the
// graph its native test builds (named beside it), on B or Autodiff<B>. In the browser a GPU
// read is asynchronous, so nothing here reads a computed tensor: every value and gradient is
// returned as a tensor (`r.out`), and the page reads them. Conversions where Kiln's shapes
// differ from PyTorch's (a kept reduced dim) are explicit (`r.out_kept`).
//
// Cases not run here (the page lists them with these reasons, tests/webgpu/cases_shared.mjs):
//   - serialization (safetensors_load_edge_cases): SafeTensors parsing on the host, no
//     backend op (tests/native/record/round2_safetensors_test.cpp);
//   - onecycle_lr_schedule, reduce_lr_on_plateau_patience_cooldown (optim): learning-rate
//     schedules are host scalars, no tensor (tests/native/optim/round2_cases_test.cpp).
#include "harness.hpp"

#include "../native/support/case_json.hpp"
#include "wgpu/runtime.hpp"

#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kiln/kiln.hpp"

namespace kiln::harness {
namespace {

using emscripten::val;

/// One run of a case on backend B: its inputs, the tensors it returns and the notes it leaves
/// (errors thrown or not where the case expects a rejection, shape checks, missing gradients).
template <class B>
class Run {
 public:
  using AD = Autodiff<B>;
  using Prim = typename B::FloatTensor;  // one primitive type for every kind (Cpu, Wgpu)

  explicit Run(json record) : rec_(std::move(record)) {
    const auto grad_of = rec_.contains("params") ? rec_.at("params").value("grad_of", std::string()) : std::string();
    per_output_ = grad_of.find("__<output>") != std::string::npos;
  }

  const json& record() const { return rec_; }
  TensorData data(const std::string& name) const { return test::case_tensor(rec_.at("inputs").at(name)); }

  /// An input on B (no graph).
  template <std::size_t D, class K = Float>
  Tensor<B, D, K> in(const std::string& name) const {
    return Tensor<B, D, K>::from_data(data(name));
  }
  /// An input on Autodiff<B> that does not require gradients.
  template <std::size_t D, class K = Float>
  Tensor<AD, D, K> constant(const std::string& name) const {
    return Tensor<AD, D, K>::from_data(data(name));
  }
  /// An input on Autodiff<B> that requires gradients; `objective` returns its gradient.
  template <std::size_t D>
  Tensor<AD, D> leaf(const std::string& name) {
    auto t = Tensor<AD, D>::from_data(data(name)).require_grad();
    track(name, t);
    return t;
  }
  /// Tracks a tensor that requires gradients (a module's parameter) as input `name`.
  template <std::size_t D>
  void track(const std::string& name, const Tensor<AD, D>& t) {
    leaves_.emplace_back(name, [t](const typename AD::Gradients& g) -> std::optional<Prim> {
      auto grad = t.grad(g);
      if (!grad) return std::nullopt;
      return grad->primitive();
    });
  }

  /// Returns `t` as expected[key].
  template <class BB, std::size_t D, class K>
  void out(const std::string& key, const Tensor<BB, D, K>& t) {
    if constexpr (std::is_same_v<BB, AD>) {
      outs_.emplace_back(key, t.inner().primitive());
    } else {
      outs_.emplace_back(key, t.primitive());
    }
  }
  /// Returns `t`, whose shape must be `kept` (Kiln keeps a reduced dim where PyTorch drops
  /// it), relabelled with expected[key]'s shape.
  template <class BB, std::size_t D, class K>
  void out_kept(const std::string& key, const Tensor<BB, D, K>& t, const Shape& kept) {
    if (t.shape() != kept) {
      note("fail: " + key + ": shape " + str_cat(t.shape()) + ", expected the kept shape " + str_cat(kept));
      return;
    }
    Prim p;
    if constexpr (std::is_same_v<BB, AD>) {
      p = t.inner().primitive();
    } else {
      p = t.primitive();
    }
    const Shape want = test::case_tensor(rec_.at("expected").at(key)).shape;
    if constexpr (std::is_same_v<K, Int>) {
      outs_.emplace_back(key, B::IntOps::reshape(p, want.to_vector()));
    } else {
      outs_.emplace_back(key, B::FloatOps::reshape(p, want.to_vector()));
    }
  }

  /// Returns output `name` and the gradients of its objective sum(out · dy_<name>) (out
  /// itself when the case has no dy_<name>) for every tracked input: grad_<input> or
  /// grad_<input>__<name>. An input with no expected key for `name` must get no gradient.
  template <std::size_t D>
  void objective(const std::string& name, const Tensor<AD, D>& o) {
    out(name, o);
    const std::string dy = "dy_" + name;
    const auto grads = rec_.at("inputs").contains(dy) ? (o * constant<D>(dy)).sum().backward() : o.sum().backward();
    for (const auto& [input, grad_of] : leaves_) {
      const std::string key = "grad_" + input + (per_output_ ? "__" + name : "");
      const std::optional<Prim> got = grad_of(grads);
      if (!rec_.at("expected").contains(key)) {
        if (got) note("fail: " + input + " got a gradient from " + name + ", which does not depend on it");
        continue;
      }
      if (!got) {
        note("fail: no gradient for " + key);
        continue;
      }
      outs_.emplace_back(key, *got);
    }
  }

  /// Runs a request the case expects rejected (expected[key].error): notes "threw: <key>" if
  /// it throws kiln::Error, else "returned: <key>".
  template <class F>
  void rejects(const std::string& key, F f) {
    try {
      f();
      note("returned: " + key);
    } catch (const kiln::Error& e) {
      note("threw: " + key + " (" + std::string(error_code_name(e.code())) + ": " + e.what() + ")");
    }
  }

  void note(std::string n) { notes_.push_back(std::move(n)); }
  std::vector<std::pair<std::string, Prim>>& outs() { return outs_; }
  const std::vector<std::string>& notes() const { return notes_; }

 private:
  json rec_;
  bool per_output_ = false;
  std::vector<std::pair<std::string, std::function<std::optional<Prim>(const typename AD::Gradients&)>>> leaves_;
  std::vector<std::pair<std::string, Prim>> outs_;
  std::vector<std::string> notes_;
};

struct CaseFns {
  std::function<void(Run<Cpu>&)> cpu;
  std::function<void(Run<Wgpu>&)> gpu;
};
std::map<std::string, CaseFns>& cases() {
  static std::map<std::string, CaseFns> r;
  return r;
}
bool register_case(const std::string& id, CaseFns fns) {
  cases()[id] = std::move(fns);
  return true;
}

}  // namespace
}  // namespace kiln::harness

/// A case: `template <class B> void body(Run<B>& r)`, registered for Cpu and Wgpu.
#define KILN_SHARED_CASE(id)                                                                          \
  template <class B>                                                                                  \
  void KILN_HARNESS_CAT(shared_case_, id)(Run<B> & r);                                                \
  static const bool KILN_HARNESS_CAT(shared_case_registered_, id) = register_case(                    \
      #id, {[](Run<Cpu>& r) { KILN_HARNESS_CAT(shared_case_, id)<Cpu>(r); },                          \
            [](Run<Wgpu>& r) { KILN_HARNESS_CAT(shared_case_, id)<Wgpu>(r); }});                     \
  template <class B>                                                                                  \
  void KILN_HARNESS_CAT(shared_case_, id)(Run<B> & r)

namespace kiln::harness {
namespace {

// ================================================================== the cases of
// tests/native/autodiff/cases_grad_test.cpp (autodiff, elementwise, reductions, shape_ops,
// softmax_ce): forward values and every gradient, on Autodiff<B>.

KILN_SHARED_CASE(softmax_partial_mask) {
  auto x = r.template leaf<2>("x");
  r.objective("out", activation::softmax(x, 1));
}

KILN_SHARED_CASE(softmax_nonfinite_rows) {
  auto x = r.template leaf<2>("x");
  r.out("softmax", activation::softmax(x, 1));
  r.out("log_softmax", activation::log_softmax(x, 1));
}

// cross_entropy_ignore_index_*: the composition of cases_grad_test.cpp (log_softmax, gather,
// masks, sum / count) and CrossEntropyLoss (tests/native/nn/loss/loss_cases_test.cpp).
template <class AD>
std::pair<Tensor<AD, 1>, Tensor<AD, 1>> losses_and_count(const Tensor<AD, 2>& logits,
                                                         const Tensor<AD, 1, Int>& targets) {
  const auto ignored = targets.equal_elem(-100);
  const auto safe_targets = targets.mask_fill(ignored, 0);
  const auto log_probs = activation::log_softmax(logits, 1);
  const auto picked = log_probs.gather(1, safe_targets.template unsqueeze_dim<2>(1)).template squeeze_dim<1>(1);
  const auto losses = (-picked).mask_fill(ignored, 0.f);
  const auto count = ignored.bool_not().float_().sum();
  return {losses, count};
}

KILN_SHARED_CASE(cross_entropy_ignore_index_partial) {
  using AD = Autodiff<B>;
  auto logits = r.template leaf<2>("logits");
  const auto target = r.template constant<1, Int>("target");
  const auto [losses, count] = losses_and_count(logits, target);
  const auto composed = losses.sum() / count;
  // The loss API must give the same value (its gradient is the composition's, bit for bit).
  r.out("out", nn::loss::CrossEntropyLossConfig().with_ignore_index(-100).init<AD>().forward(logits, target));
  r.objective("out", composed);
}

KILN_SHARED_CASE(cross_entropy_ignore_index_all) {
  using AD = Autodiff<B>;
  auto logits = r.template leaf<2>("logits");
  const auto target = r.template constant<1, Int>("target");
  const auto [losses, count] = losses_and_count(logits, target);
  r.out("loss_mean", losses.sum() / count);
  r.out("loss_sum", losses.sum());
  const auto config = nn::loss::CrossEntropyLossConfig().with_ignore_index(-100);
  r.out("loss_mean", config.init<AD>().forward(logits, target));
  r.out("loss_sum", config.with_reduction(nn::loss::Reduction::Sum).init<AD>().forward(logits, target));
}

KILN_SHARED_CASE(max_all_ties_grad) {
  auto x = r.template leaf<2>("x");
  r.objective("out", x.max());
}

KILN_SHARED_CASE(argmax_ties_first_index) {
  const auto xi = r.template constant<2, Int>("xi");
  auto xf = r.template leaf<2>("xf");
  r.out_kept("argmax_i_dim1", xi.argmax(1), Shape{3, 1});
  r.out_kept("argmax_i_dim0", xi.argmax(0), Shape{1, 4});
  r.out_kept("argmin_i_dim1", xi.argmin(1), Shape{3, 1});
  r.out_kept("argmax_f_dim1", xf.argmax(1), Shape{3, 1});
  r.out_kept("argmin_f_dim0", xf.argmin(0), Shape{1, 3});
}

KILN_SHARED_CASE(mean_sum_empty_axis) {
  auto x = r.template leaf<2>("x");
  r.out_kept("mean_dim1", x.mean_dim(1), Shape{2, 1});
  r.out_kept("sum_dim1", x.sum_dim(1), Shape{2, 1});
  r.out_kept("mean_dim0", x.mean_dim(0), Shape{1, 0});
  r.out("mean_all", x.mean());
}

KILN_SHARED_CASE(abs_relu_grad_at_zero) {
  auto x = r.template leaf<1>("x");
  r.objective("abs", x.abs());
  r.objective("relu", activation::relu(x));
  r.objective("leaky_relu", activation::leaky_relu(x, 0.1));
}

KILN_SHARED_CASE(sqrt_grad_at_zero) {
  auto x = r.template leaf<1>("x");
  r.objective("out", x.sqrt());
}

KILN_SHARED_CASE(sqrt_of_square_at_zero) {
  auto x = r.template leaf<1>("x");
  r.objective("out", (x * x).sqrt());
}

KILN_SHARED_CASE(clamp_grad_at_bounds) {
  auto x = r.template leaf<1>("x");
  r.objective("out", x.clamp(0.f, 1.f));
}

KILN_SHARED_CASE(sigmoid_tanh_silu_extreme) {
  auto x = r.template leaf<1>("x");
  r.objective("sigmoid", activation::sigmoid(x));
  r.objective("tanh", activation::tanh(x));
  r.objective("silu", activation::silu(x));
}

KILN_SHARED_CASE(gelu_exact_and_tanh) {
  auto x = r.template leaf<1>("x");
  r.objective("gelu_erf", activation::gelu(x));
  r.objective("gelu_tanh", activation::gelu(x, /*tanh_approximation=*/true));
}

KILN_SHARED_CASE(broadcast_grad_reduction) {
  auto a = r.template leaf<2>("a");
  auto b = r.template leaf<2>("b");
  auto c = r.template leaf<1>("c");
  auto x = r.template leaf<3>("x");
  auto y = r.template leaf<2>("y");
  auto s = r.template leaf<1>("s");
  r.objective("abc", a * b + c.template unsqueeze<2>());
  r.objective("xy", x + y.template unsqueeze<3>());
  r.objective("sx", s.template unsqueeze<3>() * x);
}

KILN_SHARED_CASE(diamond_graph_reuse) {
  auto x = r.template leaf<1>("x");
  const auto a = r.template constant<1>("a");
  const auto xa = x * a;
  r.objective("f", x * xa + (x * x) * a + x * xa);
  const auto e = x.exp();
  r.objective("g", e.powf_scalar(2.0) + e);
}

KILN_SHARED_CASE(where_masked_nan_branch_grad) {
  auto x = r.template leaf<1>("x");
  r.objective("safe_sqrt", x.zeros_like().mask_where(x.greater_elem(0.0), x.sqrt()));
}

KILN_SHARED_CASE(slice_steps_positive_and_negative) {
  auto v = r.template leaf<1>("v");
  auto m = r.template leaf<2>("m");
  auto w = r.template leaf<1>("w");
  r.objective("v_slice", v.slice({Slice(1, 8, 3)}));
  r.objective("m_slice", m.slice({Slice::all(), Slice(0, 5, 2)}));
  r.objective("w_negstep", w.slice({Slice(1, 6, -2)}));
}

KILN_SHARED_CASE(reshape_infer_dim) {
  auto x = r.template leaf<3>("x");
  auto e = r.template leaf<2>("e");
  r.objective("x_r", x.template reshape<2>(std::array<std::int64_t, 2>{-1, 6}));
  r.out("e_r", e.template reshape<2>(std::array<std::int64_t, 2>{3, -1}));
}

KILN_SHARED_CASE(cat_stack_with_empty) {
  using AD = Autodiff<B>;
  auto a = r.template leaf<2>("a");
  auto e = r.template leaf<2>("e");
  auto b = r.template leaf<2>("b");
  auto a0 = r.template leaf<1>("a0");
  auto a1 = r.template leaf<1>("a1");
  r.objective("cat", Tensor<AD, 2>::cat({a, e, b}, 1));
  r.objective("stack", Tensor<AD, 1>::template stack<2>({a0, a1}, 1));
}

// ================================================================== int_ops
// (tests/native/tensor/int_ops_test.cpp, elementwise_test.cpp), on B.

KILN_SHARED_CASE(int_division_floor_vs_trunc) {
  const auto a = r.template in<1, Int>("a");
  const auto b = r.template in<1, Int>("b");
  r.out("floor_div", a / b);
  r.out("trunc_div", a.div_trunc(b));
}

KILN_SHARED_CASE(remainder_vs_fmod_sign) {
  const auto a = r.template in<1, Int>("a");
  const auto b = r.template in<1, Int>("b");
  r.out("remainder_int", a % b);
  r.out("fmod_int", a.fmod(b));
  const auto af = r.template in<1>("af");
  const auto bf = r.template in<1>("bf");
  r.out("remainder_float", af % bf);
  r.out("fmod_float", af.fmod(bf));
}

}  // namespace
}  // namespace kiln::harness

// ================================================================== Embind surface
namespace kiln::harness {
namespace {

std::vector<WgpuTensor> g_kept;  // the Wgpu results of the last run, until freeSharedCase()

val shape_array(const Shape& s) {
  val out = val::array();
  for (std::size_t i = 0; i < s.rank(); ++i) out.call<void>("push", static_cast<double>(s[i]));
  return out;
}

val notes_array(const std::vector<std::string>& notes) {
  val out = val::array();
  for (const auto& n : notes) out.call<void>("push", n);
  return out;
}

template <class F>
val guarded(F f) {
  try {
    return f();
  } catch (const kiln::Error& e) {
    val out = val::object();
    out.set("error", std::string(error_code_name(e.code())) + ": " + e.what());
    return out;
  } catch (const std::exception& e) {
    val out = val::object();
    out.set("error", std::string("std: ") + e.what());
    return out;
  }
}

/// {outs: [{key, shape, dtype, data}], notes} or {error}.
val run_cpu(const CaseFns& fns, const json& rec) {
  return guarded([&] {
    Run<Cpu> r(rec);
    fns.cpu(r);
    val outs = val::array();
    for (const auto& [key, t] : r.outs()) {
      val o = val::object();
      o.set("key", key);
      o.set("shape", shape_array(t.shape()));
      o.set("dtype", std::string(dtype_name(t.dtype())));
      const TensorData d = CpuOps::into_data(t);
      val arr = val::array();
      for (std::int64_t i = 0; i < d.num_elements(); ++i) arr.call<void>("push", d.value_as_double(static_cast<std::size_t>(i)));
      o.set("data", arr);
      outs.call<void>("push", o);
    }
    val out = val::object();
    out.set("outs", outs);
    out.set("notes", notes_array(r.notes()));
    return out;
  });
}

/// {outs: [{key, shape, dtype, buffer, bytes}], notes} or {error}; JS reads each buffer with
/// M.kgRead(buffer, bytes).
val run_gpu(const CaseFns& fns, const json& rec) {
  return guarded([&] {
    Run<Wgpu> r(rec);
    fns.gpu(r);
    val outs = val::array();
    for (const auto& [key, t] : r.outs()) {
      val o = val::object();
      o.set("key", key);
      o.set("shape", shape_array(t.shape()));
      o.set("dtype", std::string(dtype_name(t.dtype())));
      o.set("buffer", t.buffer().id());
      o.set("bytes", static_cast<double>(t.num_bytes()));
      g_kept.push_back(t);
      outs.call<void>("push", o);
    }
    val out = val::object();
    out.set("outs", outs);
    out.set("notes", notes_array(r.notes()));
    return out;
  });
}

val run_shared_case(std::string id, std::string record) {
  val out = val::object();
  auto it = cases().find(id);
  if (it == cases().end()) {
    out.set("missing", true);
    return out;
  }
  const json rec = json::parse(record);
  out.set("cpu", run_cpu(it->second, rec));
  out.set("gpu", run_gpu(it->second, rec));
  return out;
}

void free_shared_case() { g_kept.clear(); }

val shared_case_ids() {
  val out = val::array();
  for (const auto& [id, _] : cases()) out.call<void>("push", id);
  return out;
}

EMSCRIPTEN_BINDINGS(kiln_webgpu_shared_cases) {
  emscripten::function("runSharedCase", &run_shared_case);
  emscripten::function("freeSharedCase", &free_shared_case);
  emscripten::function("sharedCaseIds", &shared_case_ids);
}

}  // namespace
}  // namespace kiln::harness
