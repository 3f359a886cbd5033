// The gradients of the PyTorch reference cases (tests/native/cases/cases.jsonl) in the
// categories autodiff, elementwise, reductions, shape_ops and softmax_ce, on Autodiff<Cpu>.
//
// Each test builds its case's graph as the case's `op` and `params.grad_of` describe. For
// every differentiated output o the objective is L_o = sum(o · dy_o), or o itself when o is
// a scalar loss with no `dy_o` input, back-propagated through a graph of its own. Then:
//   - the forward value of o and every expected gradient `grad_<input>` (one objective) or
//     `grad_<input>__<o>` (several) is compared with the case's tolerance: nan must match
//     nan and ±inf the same infinity (the sign of zero is not checked), shapes exactly;
//   - an input that requires gradients but has no key for o must get no gradient at all
//     (the cases emit no key when o does not depend on that input);
//   - every expected key of the case must have been checked, so no value of the file is
//     skipped silently; and every case of the five categories must have a test here.
// The forward values are also tested on every backend in tests/native/tensor/.
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "kiln/kiln.hpp"
#include "support/case_records.hpp"
#include "support/cases.hpp"

namespace kiln {
namespace {

using AD = Autodiff<Cpu>;
using Grads = AD::Gradients;
using nlohmann::json;

/// The categories whose gradients issue 3 requires.
const std::set<std::string> kCategories = {"autodiff", "elementwise", "reductions", "shape_ops",
                                           "softmax_ce"};

/// One case on Autodiff<Cpu>: makes its inputs, runs its objectives, checks its keys.
class CaseCheck {
 public:
  explicit CaseCheck(const std::string& id) : case_(test::load_case(id)), record_(test::case_record(id)) {
    // "grad_<input>__<output> = ..." when the case differentiates several outputs.
    const auto grad_of = record_.at("params").value("grad_of", std::string());
    per_output_keys_ = grad_of.find("__<output>") != std::string::npos;
  }
  CaseCheck(const CaseCheck&) = delete;
  CaseCheck& operator=(const CaseCheck&) = delete;

  /// Fails the test if some expected key of the case was not checked.
  ~CaseCheck() {
    for (const auto& [key, value] : record_.at("expected").items()) {
      EXPECT_TRUE(checked_.count(key))
          << case_.id << ": expected \"" << key << "\" was not checked";
    }
  }

  const test::Case& c() const { return case_; }

  /// An input that requires gradients.
  template <std::size_t D>
  Tensor<AD, D> leaf(const std::string& name) {
    auto t = Tensor<AD, D>::from_data(case_.input(name)).require_grad();
    leaves_.emplace_back(name, [t](const Grads& grads) -> std::optional<TensorData> {
      auto g = t.grad(grads);
      if (!g) return std::nullopt;
      return g->to_data();
    });
    return t;
  }

  /// An input that does not (a constant, targets, an upstream gradient).
  template <std::size_t D, class K = Float>
  Tensor<AD, D, K> constant(const std::string& name) const {
    return Tensor<AD, D, K>::from_data(case_.input(name));
  }

  /// Compares a forward value with expected[name].
  void forward(const std::string& name, const TensorData& got) { compare(name, got); }

  /// Checks output `name`, back-propagates its objective and checks every leaf's gradient.
  template <std::size_t D>
  void objective(const std::string& name, const Tensor<AD, D>& out) {
    forward(name, out.to_data());
    const std::string dy = "dy_" + name;
    const Grads grads = record_.at("inputs").contains(dy)
                            ? (out * constant<D>(dy)).sum().backward()
                            : out.sum().backward();  // a scalar loss: d[out]/d<input>
    for (const auto& [input, grad_of] : leaves_) {
      const std::string key = "grad_" + input + (per_output_keys_ ? "__" + name : "");
      const std::optional<TensorData> got = grad_of(grads);
      if (!record_.at("expected").contains(key)) {
        EXPECT_FALSE(got.has_value()) << case_.id << ": " << input << " got a gradient from "
                                      << name << ", which does not depend on it";
        continue;
      }
      if (!got) {
        ADD_FAILURE() << case_.id << ": no gradient for " << key;
        checked_.insert(key);
        continue;
      }
      compare(key, *got);
    }
  }

 private:
  void compare(const std::string& key, const TensorData& got) {
    checked_.insert(key);
    try {
      got.assert_approx_eq(case_.expected(key), case_.tolerance());
    } catch (const std::exception& e) {
      ADD_FAILURE() << case_.id << ": " << key << ": " << e.what();
    }
  }

  test::Case case_;
  json record_;
  bool per_output_keys_ = false;
  std::vector<std::pair<std::string, std::function<std::optional<TensorData>(const Grads&)>>>
      leaves_;
  std::set<std::string> checked_;
};

/// The ids this file tests, one TEST each below.
const std::set<std::string> kTested = {
    // softmax_ce
    "softmax_partial_mask", "softmax_nonfinite_rows", "cross_entropy_ignore_index_partial",
    "cross_entropy_ignore_index_all",
    // reductions
    "max_all_ties_grad", "argmax_ties_first_index", "mean_sum_empty_axis",
    // elementwise
    "abs_relu_grad_at_zero", "sqrt_grad_at_zero", "sqrt_of_square_at_zero", "clamp_grad_at_bounds",
    "sigmoid_tanh_silu_extreme", "gelu_exact_and_tanh",
    // autodiff
    "broadcast_grad_reduction", "diamond_graph_reuse", "where_masked_nan_branch_grad",
    // shape_ops
    "slice_steps_positive_and_negative", "reshape_infer_dim", "cat_stack_with_empty"};

TEST(AutodiffCasesTest, EveryCaseOfTheFiveCategoriesIsTested) {
  std::set<std::string> in_scope;
  for (const auto& r : test::case_records()) {
    if (kCategories.count(r.at("category").get<std::string>())) {
      in_scope.insert(r.at("id").get<std::string>());
    }
  }
  EXPECT_EQ(in_scope, kTested);
}

// ------------------------------------------------------------------ softmax_ce

TEST(AutodiffCasesTest, SoftmaxPartialMask) {
  CaseCheck check("softmax_partial_mask");
  auto x = check.leaf<2>("x");
  check.objective("out", activation::softmax(x, 1));
}

// No gradient in this case (no grad_of, no dy_ inputs): only forward values, also tested
// on Cpu in tests/native/tensor/activation_test.cpp. Here with x tracked on Autodiff<Cpu>.
TEST(AutodiffCasesTest, SoftmaxNonfiniteRowsForwardOnly) {
  CaseCheck check("softmax_nonfinite_rows");
  auto x = check.leaf<2>("x");
  check.forward("softmax", activation::softmax(x, 1).to_data());
  check.forward("log_softmax", activation::log_softmax(x, 1).to_data());
}

constexpr std::int32_t kIgnoreIndex = -100;  // torch.nn.CrossEntropyLoss's default

/// Per-row losses -log_softmax(logits)[i, target_i] (0 on ignored rows) and the count of
/// rows not ignored: the composition of tests/native/tensor/cross_entropy_cases_test.cpp.
std::pair<Tensor<AD, 1>, Tensor<AD, 1>> losses_and_count(const Tensor<AD, 2>& logits,
                                                         const Tensor<AD, 1, Int>& targets) {
  const auto ignored = targets.equal_elem(kIgnoreIndex);
  const auto safe_targets = targets.mask_fill(ignored, 0);
  const auto log_probs = activation::log_softmax(logits, 1);
  const auto picked = log_probs.gather(1, safe_targets.unsqueeze_dim<2>(1)).squeeze_dim<1>(1);
  const auto losses = (-picked).mask_fill(ignored, 0.f);
  const auto count = ignored.bool_not().float_().sum();
  return {losses, count};
}

TEST(AutodiffCasesTest, CrossEntropyIgnoreIndexPartial) {
  CaseCheck check("cross_entropy_ignore_index_partial");
  auto logits = check.leaf<2>("logits");
  const auto [losses, count] = losses_and_count(logits, check.constant<1, Int>("target"));
  check.objective("out", losses.sum() / count);  // mean over the rows not ignored
}

// No gradient in this case (no grad_of): forward values only, also tested on Cpu in
// tests/native/tensor/cross_entropy_cases_test.cpp. Here with the logits tracked.
TEST(AutodiffCasesTest, CrossEntropyIgnoreIndexAllForwardOnly) {
  CaseCheck check("cross_entropy_ignore_index_all");
  auto logits = check.leaf<2>("logits");
  const auto [losses, count] = losses_and_count(logits, check.constant<1, Int>("target"));
  check.forward("loss_mean", (losses.sum() / count).to_data());
  check.forward("loss_sum", losses.sum().to_data());
}

// ------------------------------------------------------------------ reductions

// PyTorch's convention, pinned by the case: a whole-tensor max splits the gradient evenly
// among the tied maxima (1/3 each here); Burn would route it to one element.
TEST(AutodiffCasesTest, MaxAllTies) {
  CaseCheck check("max_all_ties_grad");
  auto x = check.leaf<2>("x");
  check.objective("out", x.max());
}

/// Kiln keeps a reduced dim with size 1 where PyTorch drops it: checks that `got` has the
/// kept shape and relabels it with the case's shape for expected[name].
TensorData dropping_reduced_dim(const test::Case& c, const std::string& name, TensorData got,
                                const Shape& kept) {
  EXPECT_EQ(got.shape, kept) << c.id << ": " << name;
  got.shape = c.expected(name).shape;
  return got;
}

// argmax/argmin return Int indices: nothing to differentiate. Also tested on Cpu in
// tests/native/tensor/reduction_test.cpp; here the float input is tracked, which must not
// change the indices.
TEST(AutodiffCasesTest, ArgmaxTiesFirstIndexHasNoGradient) {
  CaseCheck check("argmax_ties_first_index");
  const auto& c = check.c();
  const auto xi = check.constant<2, Int>("xi");
  auto xf = check.leaf<2>("xf");
  const auto cmp = [&](const std::string& name, const TensorData& got, const Shape& kept) {
    check.forward(name, dropping_reduced_dim(c, name, got, kept));
  };
  cmp("argmax_i_dim1", xi.argmax(1).to_data(), {3, 1});
  cmp("argmax_i_dim0", xi.argmax(0).to_data(), {1, 4});
  cmp("argmin_i_dim1", xi.argmin(1).to_data(), {3, 1});
  cmp("argmax_f_dim1", xf.argmax(1).to_data(), {3, 1});
  cmp("argmin_f_dim0", xf.argmin(0).to_data(), {1, 3});
}

// No gradient in this case (no grad_of): forward values only (reductions over an empty
// axis), also tested on Cpu in tests/native/tensor/reduction_test.cpp. Here x is tracked.
TEST(AutodiffCasesTest, MeanSumEmptyAxisForwardOnly) {
  CaseCheck check("mean_sum_empty_axis");
  const auto& c = check.c();
  auto x = check.leaf<2>("x");
  const auto cmp = [&](const std::string& name, const TensorData& got, const Shape& kept) {
    check.forward(name, dropping_reduced_dim(c, name, got, kept));
  };
  cmp("mean_dim1", x.mean_dim(1).to_data(), {2, 1});
  cmp("sum_dim1", x.sum_dim(1).to_data(), {2, 1});
  cmp("mean_dim0", x.mean_dim(0).to_data(), {1, 0});
  check.forward("mean_all", x.mean().to_data());
}

// ------------------------------------------------------------------ elementwise

// PyTorch's convention: d|x|/dx = 0, relu'(x) = 0 and leaky_relu'(x) = negative_slope at
// x = 0 and x = -0.
TEST(AutodiffCasesTest, AbsReluLeakyReluAtZero) {
  CaseCheck check("abs_relu_grad_at_zero");
  auto x = check.leaf<1>("x");
  check.objective("abs", x.abs());
  check.objective("relu", activation::relu(x));
  check.objective("leaky_relu", activation::leaky_relu(x, 0.1));
}

// sqrt'(0) = inf (as PyTorch), and 1 / (2·1e-15) stays finite.
TEST(AutodiffCasesTest, SqrtAtZero) {
  CaseCheck check("sqrt_grad_at_zero");
  auto x = check.leaf<1>("x");
  check.objective("out", x.sqrt());
}

// Two primitive ops, no fusion: at 0, sqrt's step gives -1/0 = -inf, and mul's step gives
// -inf·0 = nan (PyTorch's op-by-op IEEE result).
TEST(AutodiffCasesTest, SqrtOfSquareAtZero) {
  CaseCheck check("sqrt_of_square_at_zero");
  auto x = check.leaf<1>("x");
  check.objective("out", (x * x).sqrt());
}

// PyTorch 1.x convention: inclusive bounds, the gradient passes at x == min and x == max.
TEST(AutodiffCasesTest, ClampAtBounds) {
  CaseCheck check("clamp_grad_at_bounds");
  auto x = check.leaf<1>("x");
  check.objective("out", x.clamp(0.f, 1.f));
}

TEST(AutodiffCasesTest, SigmoidTanhSiluAtExtremes) {
  CaseCheck check("sigmoid_tanh_silu_extreme");
  auto x = check.leaf<1>("x");
  check.objective("sigmoid", activation::sigmoid(x));
  check.objective("tanh", activation::tanh(x));
  check.objective("silu", activation::silu(x));
}

TEST(AutodiffCasesTest, GeluExactAndTanh) {
  CaseCheck check("gelu_exact_and_tanh");
  auto x = check.leaf<1>("x");
  check.objective("gelu_erf", activation::gelu(x));
  check.objective("gelu_tanh", activation::gelu(x, /*tanh_approximation=*/true));
}

// ------------------------------------------------------------------ autodiff

// Kiln's ranks are static, so the rank alignment PyTorch does implicitly is an explicit
// unsqueeze (a reshape, whose backward reshapes back): c [4] -> [1, 4], y [4, 1] ->
// [1, 4, 1], s [] (Kiln's [1]) -> [1, 1, 1]. The size-1 dims are then broadcast by the
// binary ops, whose backward must sum the gradient over them.
TEST(AutodiffCasesTest, BroadcastGradReduction) {
  CaseCheck check("broadcast_grad_reduction");
  auto a = check.leaf<2>("a");
  auto b = check.leaf<2>("b");
  auto c = check.leaf<1>("c");
  auto x = check.leaf<3>("x");
  auto y = check.leaf<2>("y");
  auto s = check.leaf<1>("s");
  check.objective("abc", a * b + c.unsqueeze<2>());
  check.objective("xy", x + y.unsqueeze<3>());
  check.objective("sx", s.unsqueeze<3>() * x);
}

// f reuses the node x·a in two products; g reuses e = exp(x). Each node must receive the
// sum of its consumers' gradients and be back-propagated once.
TEST(AutodiffCasesTest, DiamondGraphReuse) {
  CaseCheck check("diamond_graph_reuse");
  auto x = check.leaf<1>("x");
  const auto a = check.constant<1>("a");  // "with a constant": no gradient
  const auto xa = x * a;
  check.objective("f", x * xa + (x * x) * a + x * xa);
  const auto e = x.exp();
  check.objective("g", e.powf_scalar(2.0) + e);
}

// PyTorch semantics, pinned by the case: where() sends 0 to the unselected branch, but
// sqrt's step still computes 0 / (2·sqrt(x)) there, which is nan at x = -1 (sqrt = nan)
// and at x = 0 (0 / 0): the nan leaks into the gradient.
TEST(AutodiffCasesTest, WhereMaskedNanBranch) {
  CaseCheck check("where_masked_nan_branch_grad");
  auto x = check.leaf<1>("x");
  check.objective("safe_sqrt", x.zeros_like().mask_where(x.greater_elem(0.0), x.sqrt()));
}

// ------------------------------------------------------------------ shape_ops

TEST(AutodiffCasesTest, SliceStepsPositiveAndNegative) {
  CaseCheck check("slice_steps_positive_and_negative");
  auto v = check.leaf<1>("v");
  auto m = check.leaf<2>("m");
  auto w = check.leaf<1>("w");
  check.objective("v_slice", v.slice({Slice(1, 8, 3)}));
  check.objective("m_slice", m.slice({Slice::all(), Slice(0, 5, 2)}));
  // params.w_negstep: the range [1, 6) walked from its last element with stride 2.
  check.objective("w_negstep", w.slice({Slice(1, 6, -2)}));
}

TEST(AutodiffCasesTest, ReshapeInferDim) {
  CaseCheck check("reshape_infer_dim");
  auto x = check.leaf<3>("x");
  auto e = check.leaf<2>("e");  // reshaped but not differentiated: no gradient key
  check.objective("x_r", x.reshape<2>(std::array<std::int64_t, 2>{-1, 6}));
  check.forward("e_r", e.reshape<2>(std::array<std::int64_t, 2>{3, -1}).to_data());
}

TEST(AutodiffCasesTest, CatStackWithEmpty) {
  CaseCheck check("cat_stack_with_empty");
  auto a = check.leaf<2>("a");
  auto e = check.leaf<2>("e");  // [2, 0]: its gradient is an empty [2, 0] tensor
  auto b = check.leaf<2>("b");
  auto a0 = check.leaf<1>("a0");
  auto a1 = check.leaf<1>("a1");
  check.objective("cat", Tensor<AD, 2>::cat({a, e, b}, 1));
  check.objective("stack", Tensor<AD, 1>::stack<2>({a0, a1}, 1));
}

}  // namespace
}  // namespace kiln
