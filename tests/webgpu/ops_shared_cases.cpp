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
// Keys run on Cpu only (`Run::host_read`: the code reads a computed tensor on the host, a
// StateError on Wgpu; the page logs them as "not checked"):
//   - clip_grad_nonfinite_and_norm_types' nan_error_if_nonfinite: the NonFiniteError is
//     decided on the host from the norm's value (checked on webgpu by webgpu-api.e2e.mjs
//     through kiln.optim.clipGradNormAsync). The other clipping keys run on Wgpu with
//     optim::clip_grad_norm_on_device (the norm a tensor, unread);
//   - batchnorm_cumulative_average_and_single_value, momentum None (running_*_after_1..3,
//     num_batches_tracked, y_eval): BatchNorm::update_running reads num_batches_tracked
//     (nn/batch_norm.hpp) for the factor 1/n.
#include "harness.hpp"

#include "../native/support/case_json.hpp"
#include "wgpu/runtime.hpp"

#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <functional>
#include <initializer_list>
#include <limits>
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
  /// it throws kiln::Error, else "returned: <key>". On Wgpu a StateError propagates (see
  /// host_read): a read the backend cannot do is no rejection.
  template <class F>
  void rejects(const std::string& key, F f) {
    try {
      f();
      note("returned: " + key);
    } catch (const StateError& e) {
      if (std::is_same_v<B, Wgpu>) throw;  // a synchronous read, not a rejection (host_read)
      note("threw: " + key + " (State: " + e.what() + ")");
    } catch (const kiln::Error& e) {
      note("threw: " + key + " (" + std::string(error_code_name(e.code())) + ": " + e.what() + ")");
    }
  }

  /// Runs `f`, which returns expected `keys`. On Wgpu, a StateError (a synchronous read of a
  /// computed tensor, which the browser cannot do) notes each key as not run on this backend,
  /// with the error; any other error propagates.
  template <class F>
  void host_read(std::initializer_list<std::string> keys, F f) {
    try {
      f();
    } catch (const StateError& e) {
      if (!std::is_same_v<B, Wgpu>) throw;
      for (const auto& key : keys) note("skip: " + key + ": needs a synchronous read (" + e.what() + ")");
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

// ================================================================== nn_misc, losses
// (tests/native/nn/dropout_test.cpp, loss/loss_cases_test.cpp, registered_layers_test.cpp,
// tests/js/nn_functional.test.mjs), on Autodiff<B> and B.

KILN_SHARED_CASE(dropout_inverted_scaling) {
  const auto mask = r.template constant<2>("mask");
  auto x = r.template leaf<2>("x");
  r.objective("train_p0.25", nn::DropoutConfig(0.25).init().forward_with_mask(x, mask));
  r.objective("train_p1.0", nn::DropoutConfig(1.0).init().forward_with_mask(x, mask));
  r.out("train_p1.0", nn::DropoutConfig(1.0).init().forward(x));  // the random path too
  // Eval: on the inference backend Dropout is the identity; its gradient (p = 0 on the
  // autodiff backend) is dy.
  r.out("eval", nn::DropoutConfig(0.25).init().forward(r.template in<2>("x")));
  r.objective("eval", nn::DropoutConfig(0.0).init().forward(x));
}

KILN_SHARED_CASE(bce_with_logits_extreme) {
  using AD = Autodiff<B>;
  auto logits = r.template leaf<1>("logits");
  const auto target = r.template constant<1>("target");
  r.objective("out", nn::loss::BinaryCrossEntropyLossConfig().with_logits(true).init<AD>().forward_no_reduction(logits, target));
  r.out("out", nn::loss::BinaryCrossEntropyLossConfig().with_logits(true).init<B>().forward_no_reduction(
                   r.template in<1>("logits"), r.template in<1>("target")));
}

KILN_SHARED_CASE(bce_probabilities_clamped_log) {
  using AD = Autodiff<B>;
  r.out("out", nn::loss::BinaryCrossEntropyLossConfig().init<B>().forward_no_reduction(r.template in<1>("p"),
                                                                                      r.template in<1>("target")));
  // With p tracked the values must not change.
  r.out("out", nn::loss::BinaryCrossEntropyLossConfig().init<AD>().forward_no_reduction(
                   r.template constant<1>("p").require_grad(), r.template constant<1>("target")));
}

KILN_SHARED_CASE(smooth_l1_beta_zero_is_l1) {
  const auto target = r.template constant<1>("target");
  auto pred = r.template leaf<1>("pred");
  for (const auto& [name, beta] : std::vector<std::pair<std::string, double>>{{"beta0", 0.0}, {"beta1e-6", 1e-6}}) {
    r.objective(name, nn::loss::SmoothL1LossConfig().with_beta(beta).init().forward_no_reduction(pred, target));
  }
  r.rejects("smooth_l1_beta_negative", [] { nn::loss::SmoothL1LossConfig().with_beta(-1).init(); });
  r.rejects("huber_delta_zero", [] { nn::loss::HuberLossConfig(0).init(); });
}

KILN_SHARED_CASE(cross_entropy_label_smoothing_weight_ignore) {
  using AD = Autodiff<B>;
  using nn::loss::Reduction;
  auto logits = r.template leaf<2>("logits");
  const auto target = r.template constant<1, Int>("target");
  const nn::loss::CrossEntropyLossConfig config = nn::loss::CrossEntropyLossConfig()
                          .with_weights(r.data("weight").template to_vec<float>())
                          .with_smoothing(0.2)
                          .with_ignore_index(-100);
  r.objective("loss_mean", config.init<AD>().forward(logits, target));
  r.out("loss_sum", config.with_reduction(Reduction::Sum).init<AD>().forward(logits, target));
  r.out("loss_none", config.init<AD>().forward_no_reduction(logits, target));
}

KILN_SHARED_CASE(embedding_repeated_indices_grad) {
  using AD = Autodiff<B>;
  auto embed = nn::EmbeddingConfig(5, 3).init<AD>();
  embed.weight.set(r.template constant<2>("weight").require_grad());
  r.track("weight", embed.weight.val());
  r.objective("out", embed.forward(r.template constant<2, Int>("idx")));
}

KILN_SHARED_CASE(embedding_padding_idx) {
  using AD = Autodiff<B>;
  const auto idx = r.template constant<2, Int>("idx");
  for (const auto& [name, pad] : std::vector<std::pair<std::string, std::int64_t>>{{"emb_pad0", 0}, {"emb_pad_last", -1}}) {
    Run<B> sub(r.record());  // one leaf per objective: the table of this padding_idx
    auto emb = nn::EmbeddingConfig(4, 3).with_padding_idx(pad).init<AD>();
    emb.weight.set(r.template constant<2>("weight").require_grad());
    sub.track("weight", emb.weight.val());
    sub.objective(name, emb.forward(idx));
    // The functional form on the same table.
    auto w = sub.template leaf<2>("weight");
    Run<B> fsub(r.record());
    fsub.track("weight", w);
    fsub.objective(name, nn::functional::embedding(idx, w, pad));
    for (auto* s : {&sub, &fsub}) {
      for (auto& o : s->outs()) r.outs().push_back(o);
      for (const auto& n : s->notes()) r.note(n);
    }
  }
}

// ================================================================== pooling
// (tests/native/nn/layer_cases_test.cpp, registered_layers_test.cpp, tests/js/nn_layers.test.mjs)

KILN_SHARED_CASE(maxpool2d_ties_overlapping) {
  const MaxPool2dOptions options{{2, 2}, {1, 1}};
  r.out("out", nn::functional::max_pool2d(r.template in<4>("x"), options));
  auto x = r.template leaf<4>("x");
  r.objective("out", nn::functional::max_pool2d(x, options));
}

KILN_SHARED_CASE(avgpool2d_count_include_pad) {
  auto x = r.template leaf<4>("x");
  for (const bool include : {true, false}) {
    const std::string name = include ? "include_pad" : "exclude_pad";
    const AvgPool2dOptions options{{3, 3}, {2, 2}, {1, 1}, include};
    r.out(name, nn::functional::avg_pool2d(r.template in<4>("x"), options));
    r.objective(name, nn::functional::avg_pool2d(x, options));
  }
}

KILN_SHARED_CASE(adaptive_avgpool2d_non_divisible) {
  auto x = r.template leaf<4>("x");
  r.objective("out", nn::AdaptiveAvgPool2dConfig({3, 3}).init().forward(x));
}

KILN_SHARED_CASE(maxpool_ceil_mode_drops_window_in_padding) {
  // 2-D: 5x5 k2 s2 p1 and 6x7 k1 s2, ceil_mode; 1-D: length 9 k2 s3 and length 7 k2 s2.
  auto x5 = r.template leaf<4>("x5");
  auto x67 = r.template leaf<4>("x67");
  auto x9 = r.template leaf<3>("x9");
  auto x7 = r.template leaf<3>("x7");
  r.objective("p5", nn::functional::max_pool2d(x5, MaxPool2dOptions{{2, 2}, {2, 2}, {1, 1}, {1, 1}, true}));
  r.objective("p67", nn::functional::max_pool2d(x67, MaxPool2dOptions{{1, 1}, {2, 2}, {0, 0}, {1, 1}, true}));
  r.objective("p9", nn::MaxPool1dConfig(2).with_stride(3).with_ceil_mode(true).init().forward(x9));
  r.objective("p7", nn::MaxPool1dConfig(2).with_stride(2).with_ceil_mode(true).init().forward(x7));
}

KILN_SHARED_CASE(pool_padding_over_half_kernel_rejected) {
  const auto x = r.template in<4>("x");
  r.rejects("maxpool_k2_s2_p2", [&] { nn::functional::max_pool2d(x, MaxPool2dOptions{{2, 2}, {2, 2}, {2, 2}}); });
  r.rejects("maxpool_k3_s2_p2_dilation2",
            [&] { nn::functional::max_pool2d(x, MaxPool2dOptions{{3, 3}, {2, 2}, {2, 2}, {2, 2}}); });
  r.rejects("avgpool_k2_s2_p2", [&] { nn::functional::avg_pool2d(x, AvgPool2dOptions{{2, 2}, {2, 2}, {2, 2}}); });
  r.out("maxpool_k4_s4_p2", nn::functional::max_pool2d(x, MaxPool2dOptions{{4, 4}, {4, 4}, {2, 2}}));
  r.out("avgpool_k4_s4_p2", nn::functional::avg_pool2d(x, AvgPool2dOptions{{4, 4}, {4, 4}, {2, 2}, true}));
}

// ================================================================== norm
// (tests/native/nn/layer_cases_test.cpp, registered_layers_test.cpp)

KILN_SHARED_CASE(batchnorm1d_running_var_unbiased) {
  using AD = Autodiff<B>;
  auto bn = nn::BatchNormConfig(2).with_momentum(0.1).with_epsilon(1e-5).init<AD>();
  bn.weight.set(r.template constant<1>("weight").require_grad());
  bn.bias.set(r.template constant<1>("bias").require_grad());
  bn.running_mean.set(r.template constant<1>("running_mean"));
  bn.running_var.set(r.template constant<1>("running_var"));
  auto x = r.template leaf<3>("x");
  r.track("weight", bn.weight.val());
  r.track("bias", bn.bias.val());
  const auto y = bn.forward(x);  // training: the autodiff backend
  r.out("running_mean_after", bn.running_mean.val());
  r.out("running_var_after", bn.running_var.val());
  r.objective("y", y);
  r.out("y_eval", bn.valid().forward(r.template in<3>("x_eval")));
}

KILN_SHARED_CASE(layernorm_eps_inside_sqrt) {
  using AD = Autodiff<B>;
  auto ln = nn::LayerNormConfig(4).with_epsilon(0.5).init<AD>();
  ln.weight->set(r.template constant<1>("weight").require_grad());
  ln.bias->set(r.template constant<1>("bias").require_grad());
  auto x = r.template leaf<2>("x");
  r.track("weight", ln.weight->val());
  r.track("bias", ln.bias->val());
  r.objective("out", ln.forward(x));
  r.out("out", ln.valid().forward(r.template in<2>("x")));
}

template <class B>
void run_cumulative_batchnorm(Run<B>& r) {
  auto bn = nn::BatchNormConfig(2).with_momentum(std::nullopt).init<Autodiff<B>>();
  for (int i = 1; i <= 3; ++i) {
    (void)bn.forward(r.template constant<2>("x" + std::to_string(i)));
    r.out("running_mean_after_" + std::to_string(i), bn.running_mean.val());
    r.out("running_var_after_" + std::to_string(i), bn.running_var.val());
  }
  r.out("num_batches_tracked", bn.num_batches_tracked.val());
  r.out("y_eval", bn.valid().forward(r.template in<2>("x_eval")));
}

KILN_SHARED_CASE(batchnorm_cumulative_average_and_single_value) {
  using AD = Autodiff<B>;
  // momentum None (the cumulative average) reads num_batches_tracked on the host
  // (kiln/nn/batch_norm.hpp, BatchNorm::update_running: tracked.to_data()), a StateError on Wgpu.
  r.host_read({"running_mean_after_1", "running_var_after_1", "running_mean_after_2", "running_var_after_2",
               "running_mean_after_3", "running_var_after_3", "num_batches_tracked", "y_eval"},
              [&] { run_cumulative_batchnorm(r); });
  auto bn01 = nn::BatchNormConfig(2).with_momentum(0.01).init<AD>();
  for (int i = 1; i <= 2; ++i) (void)bn01.forward(r.template constant<2>("x" + std::to_string(i)));
  r.out("momentum_0.01_running_mean", bn01.running_mean.val());
  r.out("momentum_0.01_running_var", bn01.running_var.val());
  r.out("train_n1_l2", nn::BatchNormConfig(1).init<AD>().forward(r.template constant<3>("x_n1l2")));
  r.rejects("train_one_value_per_channel_[1,2]", [&] {
    nn::BatchNormConfig(2).init<AD>().forward(Tensor<AD, 2>::zeros(Shape{1, 2}));
  });
  r.rejects("train_one_value_per_channel_[1,1,1,1]", [&] {
    nn::BatchNormConfig(1).init<AD>().forward(Tensor<AD, 4>::zeros(Shape{1, 1, 1, 1}));
  });
}

// ================================================================== conv
// (tests/native/autodiff/conv_grad_test.cpp, tests/js/nn_functional.test.mjs)

KILN_SHARED_CASE(conv2d_depthwise_stride2_grads) {
  auto x = r.template leaf<4>("x");
  auto w = r.template leaf<4>("w");
  auto b = r.template leaf<1>("bias");
  r.objective("out", conv2d(x, w, b, ConvOptions<2>({2, 2}, {1, 1}, {1, 1}, 4)));
}

KILN_SHARED_CASE(conv2d_groups2_dilation2) {
  auto x = r.template leaf<4>("x");
  auto w = r.template leaf<4>("w");
  r.objective("out", conv2d(x, w, std::nullopt, ConvOptions<2>({1, 1}, {1, 1}, {2, 2}, 2)));
}

KILN_SHARED_CASE(conv_transpose2d_output_padding) {
  auto x = r.template leaf<4>("x");
  auto w = r.template leaf<4>("w");
  auto b = r.template leaf<1>("bias");
  r.objective("out", conv_transpose2d(x, w, b, ConvTransposeOptions<2>({2, 2}, {1, 1}, {1, 1}, {1, 1}, 1)));
}

KILN_SHARED_CASE(conv_padding_ge_kernel_stride_gt_kernel) {
  {
    Run<B> s(r.record());
    auto x = s.template leaf<4>("x");
    auto w = s.template leaf<4>("w");
    auto b = s.template leaf<1>("bias");
    s.objective("conv2d", conv2d(x, w, b, ConvOptions<2>({3, 2}, {3, 1}, {1, 1}, 1)));
    for (auto& o : s.outs()) r.outs().push_back(o);
    for (const auto& n : s.notes()) r.note(n);
  }
  Run<B> s(r.record());
  auto x1 = s.template leaf<3>("x1");
  auto w1 = s.template leaf<3>("w1");
  s.objective("conv1d", conv1d(x1, w1, std::nullopt, ConvOptions<1>({4}, {5}, {1}, 1)));
  for (auto& o : s.outs()) r.outs().push_back(o);
  for (const auto& n : s.notes()) r.note(n);
}

// ================================================================== rnn_attention
// (tests/native/nn/attention_test.cpp)

template <class BB, class B>
nn::MultiHeadAttention<BB> case_mha(Run<B>& r) {
  auto mha = nn::MultiHeadAttentionConfig(4, 2).with_dropout(0.0).init<BB>();
  mha.in_proj_weight.set(Tensor<BB, 2>::from_data(r.data("in_proj_weight")));
  mha.in_proj_bias->set(Tensor<BB, 1>::from_data(r.data("in_proj_bias")));
  mha.out_proj.weight.set(Tensor<BB, 2>::from_data(r.data("out_proj_weight")));
  mha.out_proj.bias->set(Tensor<BB, 1>::from_data(r.data("out_proj_bias")));
  return mha;
}

KILN_SHARED_CASE(mha_self_attention_and_key_padding) {
  using AD = Autodiff<B>;
  auto mha = case_mha<AD>(r);
  for (const bool masked : {false, true}) {
    const std::string sfx = masked ? "_masked" : "";
    Run<B> s(r.record());
    auto q = s.template leaf<3>("q");
    auto k = s.template leaf<3>("k");
    auto v = s.template leaf<3>("v");
    s.track("in_proj_weight", mha.in_proj_weight.val());
    auto in = nn::MhaInput<AD>(q, k, v);
    if (masked) in = in.with_mask_pad(r.template constant<2, Bool>("key_padding_mask"));
    const auto [context, weights] = mha.forward_per_head(in);
    s.out("attn_weights" + sfx, weights);
    s.objective("out" + sfx, context);
    for (auto& o : s.outs()) r.outs().push_back(o);
    for (const auto& n : s.notes()) r.note(n);
  }
}

KILN_SHARED_CASE(mha_fully_masked_row) {
  const auto mha = case_mha<B>(r);
  const auto [context, weights] = mha.forward_per_head(
      nn::MhaInput<B>(r.template in<3>("q"), r.template in<3>("k"), r.template in<3>("v"))
          .with_mask_pad(r.template in<2, Bool>("key_padding_mask")));
  r.out("out", context);
  r.out("attn_weights", weights);
}

// ================================================================== round-2 tensor ops
// (tests/native/tensor/round2_ops_cases_test.cpp: Autodiff<B>'s rank-erased ops, as the JS API
// runs them; tests/js/ops_cases.test.mjs for index_out_of_range_rejected)

template <class B>
struct Erased {
  using O = typename Autodiff<B>::FloatOps;
  using P = typename Autodiff<B>::FloatTensor;
  Run<B>& r;

  P input(const std::string& name, bool grad = true) const {
    P x = O::from_data(r.data(name), DType::F32, {});
    return grad ? O::set_require_grad(std::move(x), true) : x;
  }
  void out(const std::string& key, const P& p) const { r.outs().emplace_back(key, O::inner(p)); }
  /// Returns out as `key` and the gradients of sum(out · dy) (out itself when dy is empty)
  /// as grad_<leaf>__<key>.
  void objective(const std::string& key, const P& o, const std::string& dy,
                 const std::vector<std::pair<std::string, P>>& leaves) const {
    out(key, o);
    const P loss = dy.empty() ? o : O::reduce(ReduceOp::Sum, O::binary(BinaryOp::Mul, o, input(dy, false)));
    auto g = O::backward(loss);
    for (const auto& [name, x] : leaves) {
      auto grad = O::grad(x, g);
      if (!grad) {
        r.note("fail: no gradient for grad_" + name + "__" + key);
        continue;
      }
      r.outs().emplace_back("grad_" + name + "__" + key, *grad);
    }
  }
  /// torch.matmul with rank-1 operands as the JS API lowers it.
  static P matmul(const P& a, const P& b) {
    const Shape sa = O::shape(a), sb = O::shape(b);
    if (sa.rank() >= 2 && sb.rank() >= 2) return O::matmul(a, b);
    P la = sa.rank() == 1 ? O::reshape(a, std::vector<std::int64_t>{1, sa[0]}) : a;
    P lb = sb.rank() == 1 ? O::reshape(b, std::vector<std::int64_t>{sb[0], 1}) : b;
    const auto lead = [](P t, std::size_t rank) {
      std::vector<std::int64_t> s = O::shape(t).to_vector();
      while (s.size() < rank) s.insert(s.begin(), 1);
      return O::reshape(std::move(t), s);
    };
    const std::size_t n = std::max(O::shape(la).rank(), O::shape(lb).rank());
    la = lead(std::move(la), n);
    lb = lead(std::move(lb), n);
    const P prod = O::matmul(la, lb);
    std::vector<std::int64_t> s = O::shape(prod).to_vector();
    if (sb.rank() == 1) s.pop_back();
    if (sa.rank() == 1) s.erase(s.end() - (sb.rank() == 1 ? 1 : 2));
    return O::reshape(prod, s);
  }
  static P squeeze(const P& x, std::int64_t dim) {
    std::vector<std::int64_t> s = O::shape(x).to_vector();
    s.erase(s.begin() + dim);
    return O::reshape(x, s);
  }
};

KILN_SHARED_CASE(prod_zeros_grad_and_empty) {
  using E = Erased<B>;
  using O = typename E::O;
  const E e{r};
  const auto x = e.input("x"), v = e.input("v");
  e.objective("prod_dim1", E::squeeze(O::reduce_dim(ReduceOp::Prod, x, 1), 1), "dy_prod_dim1", {{"x", x}});
  e.objective("prod_all_v", O::reduce(ReduceOp::Prod, v), "", {{"v", v}});
  e.out("prod_empty_dim1", E::squeeze(O::reduce_dim(ReduceOp::Prod, e.input("e"), 1), 1));
}

KILN_SHARED_CASE(matmul_empty_inner_and_outer_dims) {
  using E = Erased<B>;
  const E e{r};
  for (const auto& [out, a, b, dy] : std::vector<std::array<std::string, 4>>{
           {"mm_k0", "A", "B", "dy_mm_k0"}, {"bmm_k0", "A3", "B3", "dy_bmm_k0"}, {"dot_k0", "u", "w", ""}, {"mm_m0", "P", "Q", "dy_mm_m0"}}) {
    const auto pa = e.input(a), pb = e.input(b);
    e.objective(out, E::matmul(pa, pb), dy, {{a, pa}, {b, pb}});
  }
}

KILN_SHARED_CASE(matmul_vector_operands_grad) {
  using E = Erased<B>;
  const E e{r};
  for (const auto& [out, a, b, dy] : std::vector<std::array<std::string, 4>>{
           {"vm", "v", "M", "dy_vm"}, {"mv", "N", "v", "dy_mv"}, {"vv", "v", "w", ""},
           {"v_batched", "v", "T", "dy_v_batched"}, {"batched_v", "T2", "v", "dy_batched_v"}}) {
    const auto pa = e.input(a), pb = e.input(b);
    e.objective(out, E::matmul(pa, pb), dy, {{a, pa}, {b, pb}});
  }
}

KILN_SHARED_CASE(log1p_expm1_near_zero) {
  using E = Erased<B>;
  using O = typename E::O;
  const E e{r};
  const auto x = e.input("x"), ex = e.input("e");
  e.objective("log1p", O::unary(UnaryOp::Log1p, x), "dy_log1p", {{"x", x}});
  e.objective("expm1", O::unary(UnaryOp::Expm1, ex), "dy_expm1", {{"e", ex}});
}

KILN_SHARED_CASE(index_out_of_range_rejected) {
  const auto x = r.template in<2>("x");
  const auto idx2 = [](std::vector<std::int32_t> v) {
    return Tensor<B, 2, Int>::from_data(TensorData(Shape{static_cast<std::int64_t>(v.size()), 1}, std::move(v)));
  };
  const auto idx1 = [](std::vector<std::int32_t> v) {
    return Tensor<B, 1, Int>::from_data(TensorData(Shape{static_cast<std::int64_t>(v.size())}, std::move(v)));
  };
  r.rejects("gather_dim1_index3", [&] { (void)x.gather(1, idx2({3, 0})); });
  r.rejects("gather_dim1_index-1", [&] { (void)x.gather(1, idx2({-1, 0})); });
  r.rejects("index_select_dim1_index3", [&] { (void)x.select(1, idx1({3})); });
  // Kiln's override (tests/js/ops_cases.test.mjs, tests/native/tensor/indexing_test.cpp): select
  // wraps a negative index, as NumPy/ONNX; cases_shared.mjs's OVERRIDES holds the value.
  r.out("index_select_dim1_index-1", x.select(1, idx1({-1})));
  const auto table = Tensor<B, 2>::zeros(Shape{4, 2});
  const auto rows = [](std::int32_t i) { return Tensor<B, 2, Int>::from_data(TensorData(Shape{1, 1}, std::vector<std::int32_t>{i})); };
  r.rejects("embedding_index4_of_4_rows", [&] { (void)nn::functional::embedding(rows(4), table); });
  r.rejects("embedding_index-1", [&] { (void)nn::functional::embedding(rows(-1), table); });
  // torch.select(x, -1, -1): the last column (as the JS API: a slice keeping the dim, squeezed).
  r.out("select_dim-1_pos-1", x.slice({Slice::all(), Slice::index(-1)}).template squeeze_dim<1>(1));
  // torch.narrow(x, -1, -2, 2): the JS narrow (a negative start counts from the end; the C++
  // Tensor::narrow rejects it on purpose, kiln/tensor/derived.hpp).
  r.out("narrow_dim-1_start-2_len2",
        Tensor<B, 2>(B::FloatOps::slice(x.primitive(), derived::narrow_ranges_from_end(x.shape(), -1, -2, 2))));
}

// ================================================================== optim
// (tests/native/optim/cases_test.cpp, round2_cases_test.cpp): OptimizerAdaptor::step on a
// one-parameter module of Autodiff<B>, fed the case's gradients through backward() (the loss
// sum(p · g) has gradient exactly g); the parameter after each of the 3 steps is returned as
// one [steps, n] tensor. Norm clipping (GradientClipping::norm) clips on the device on Wgpu
// (optim::clip_grad_norm_on_device) and with the host-read norm on Cpu.

template <Backend B>
struct Vec1 {
  module::Param<Tensor<B, 1>> p;
  KILN_MODULE(Vec1, p)
};

template <class B, class Optim>
Tensor<B, 2> trajectory(Run<B>& r, Optim optim, double lr) {
  using AD = Autodiff<B>;
  Vec1<AD> model;
  model.p = module::Param<Tensor<AD, 1>>(r.template constant<1>("p0"));
  const auto grads = r.template constant<2>("grads");
  std::vector<Tensor<B, 1>> after;
  for (std::int64_t step = 0; step < 3; ++step) {
    const auto g = grads.slice({Slice(step, step + 1)}).template reshape<1>(std::array<std::int64_t, 1>{-1});
    const auto loss = (model.p.val() * g).sum();
    model = optim.step(lr, model, optim::GradientsParams<AD>::from_grads(loss.backward(), model));
    after.push_back(model.p.val().inner());
  }
  return Tensor<B, 1>::template stack<2>(after, 0);
}

KILN_SHARED_CASE(sgd_momentum_dampening_weight_decay) {
  using namespace optim;
  auto o = SgdConfig()
               .with_momentum(MomentumConfig().with_momentum(0.9).with_dampening(0.5))
               .with_weight_decay(WeightDecayConfig(0.1))
               .init<Autodiff<B>>();
  r.out("params_after_each_step", trajectory(r, o, 0.1));
}

KILN_SHARED_CASE(sgd_nesterov) {
  using namespace optim;
  auto o = SgdConfig()
               .with_momentum(MomentumConfig().with_momentum(0.9).with_dampening(0.0).with_nesterov(true))
               .with_weight_decay(WeightDecayConfig(0.01))
               .init<Autodiff<B>>();
  r.out("params_after_each_step", trajectory(r, o, 0.1));
}

KILN_SHARED_CASE(adamw_decoupled_weight_decay) {
  using namespace optim;
  auto o = AdamWConfig().with_beta_1(0.9).with_beta_2(0.999).with_epsilon(1e-8).with_weight_decay(0.1).init<Autodiff<B>>();
  r.out("params_after_each_step", trajectory(r, o, 0.01));
}

KILN_SHARED_CASE(rmsprop_eps_outside_sqrt_centered) {
  using namespace optim;
  for (const std::string key : {"plain", "centered_momentum_wd"}) {
    const json& p = r.record().at("params").at(key);
    auto config = RmsPropConfig()
                      .with_alpha(p.at("alpha").get<double>())
                      .with_epsilon(p.at("eps").get<double>())
                      .with_momentum(p.value("momentum", 0.0))
                      .with_centered(p.value("centered", false));
    if (p.contains("weight_decay")) config = config.with_weight_decay(WeightDecayConfig(p.at("weight_decay").get<double>()));
    r.out(key + "_params_after_each_step", trajectory(r, config.template init<Autodiff<B>>(), p.at("lr").get<double>()));
  }
}

/// A total norm (a host double) as a [1] tensor of B.
template <class B>
Tensor<B, 1> scalar(double v) {
  return Tensor<B, 1>::from_data(TensorData(Shape{1}, std::vector<float>{static_cast<float>(v)}));
}

/// clip_grad_norm over the case's gradients `names` (a GradientList of B), returning the total
/// norm as `<prefix>total_norm` and the clipped gradients as `<prefix>clipped_<suffix>`.
template <class B>
void clip_norm(Run<B>& r, const std::string& prefix, const std::vector<std::pair<std::string, std::string>>& grads,
               double max_norm, double norm_type) {
  std::vector<std::string> keys = {prefix + "total_norm"};
  for (const auto& [name, suffix] : grads) keys.push_back(prefix + "clipped_" + suffix);
  optim::GradientList<B> list;
  for (const auto& [name, suffix] : grads) {
    list.grads.push_back(B::FloatOps::from_data(r.data(name), DType::F32, {}));
  }
  if constexpr (std::is_same_v<B, Wgpu>) {
    // Wgpu: the device form (the total norm a [1] tensor, unread; what GradientClipping::norm
    // and the JS clipGradNormAsync run there).
    r.outs().emplace_back(prefix + "total_norm", optim::clip_grad_norm_on_device(list, max_norm, norm_type));
  } else {
    const double total = optim::clip_grad_norm(list, max_norm, optim::ClipGradNormOptions{norm_type, false});
    r.out(prefix + "total_norm", scalar<B>(total));
  }
  for (std::size_t i = 0; i < grads.size(); ++i) {
    const Shape shape = test::case_tensor(r.record().at("expected").at(keys[i + 1])).shape;
    r.outs().emplace_back(keys[i + 1], B::FloatOps::reshape(list.grads[i], shape.to_vector()));
  }
}

template <Backend B>
struct Three {
  module::Param<Tensor<B, 1>> a;
  module::Param<Tensor<B, 2>> b;
  module::Param<Tensor<B, 1>> c;
  KILN_MODULE(Three, a, b, c)
};

KILN_SHARED_CASE(clip_grad_norm_global) {
  using AD = Autodiff<B>;
  clip_norm(r, "", {{"grad_a", "a"}, {"grad_b", "b"}, {"grad_c", "c"}}, 6.5, 2.0);
  // Through an optimizer (cases_test.cpp, ClipGradNormGlobalThroughTheOptimizer): SGD with lr 1
  // from zeros moves each parameter by minus its clipped gradient.
  {
    Three<AD> model;
    model.a = module::Param<Tensor<AD, 1>>(Tensor<AD, 1>::zeros(Shape{2}));
    model.b = module::Param<Tensor<AD, 2>>(Tensor<AD, 2>::zeros(Shape{2, 1}));
    model.c = module::Param<Tensor<AD, 1>>(Tensor<AD, 1>::zeros(Shape{1}));
    const auto loss = (model.a.val() * r.template constant<1>("grad_a")).sum() +
                      (model.b.val() * r.template constant<2>("grad_b")).sum() +
                      (model.c.val() * r.template constant<1>("grad_c")).sum();
    auto sgd = optim::SgdConfig().with_gradient_clipping(optim::GradientClippingConfig::norm(6.5)).init<AD>();
    model = sgd.step(1.0, model, optim::GradientsParams<AD>::from_grads(loss.backward(), model));
    r.out("clipped_a", -model.a.val());
    r.out("clipped_b", -model.b.val());
    r.out("clipped_c", -model.c.val());
  }
  // Below the threshold (norm 5 < 10) nothing changes: total_norm_ab, unclipped_a/b.
  optim::GradientList<B> small;
  small.grads = {r.template in<1>("grad_a").into_primitive(), r.template in<2>("grad_b").into_primitive()};
  if constexpr (std::is_same_v<B, Wgpu>) {
    r.outs().emplace_back("total_norm_ab", optim::clip_grad_norm_on_device(small, 10.0));
  } else {
    r.out("total_norm_ab", scalar<B>(optim::clip_grad_norm(small, 10.0, optim::ClipGradNormOptions{})));
  }
  r.outs().emplace_back("unclipped_a", small.grads[0]);
  r.outs().emplace_back("unclipped_b", small.grads[1]);
}

KILN_SHARED_CASE(clip_grad_nonfinite_and_norm_types) {
  const double inf = std::numeric_limits<double>::infinity();
  clip_norm(r, "inf_", {{"grad_a", "a"}, {"grad_b_inf", "b"}}, 1.0, 2.0);
  clip_norm(r, "nan_", {{"grad_a", "a"}, {"grad_b_nan", "b"}}, 1.0, 2.0);
  clip_norm(r, "maxnorm_", {{"grad_a", "a"}, {"grad_b_12", "b"}}, 1.0, inf);
  clip_norm(r, "l1_", {{"grad_a_l1", "a"}, {"grad_b_12", "b"}}, 5.0, 1.0);
  // error_if_nonfinite: NonFiniteError (nothing changed) for the nan norm. It is decided on
  // the host after reading the norm: on Wgpu that read is a promise, so this key is checked by
  // tests/e2e/webgpu-api.e2e.mjs through kiln.optim.clipGradNormAsync (which awaits it).
  optim::GradientList<B> list;
  list.grads = {r.template in<1>("grad_a").into_primitive(), r.template in<1>("grad_b_nan").into_primitive()};
  r.host_read({"nan_error_if_nonfinite"}, [&] {
    r.rejects("nan_error_if_nonfinite", [&] { (void)optim::clip_grad_norm(list, 1.0, optim::ClipGradNormOptions{2.0, true}); });
  });
  // clip_grad_value: element-wise on the device.
  optim::GradientList<B> values;
  values.grads = {r.template in<1>("grad_value").into_primitive()};
  optim::clip_grad_value(values, 1.0);
  r.outs().emplace_back("value_clipped", values.grads[0]);
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
