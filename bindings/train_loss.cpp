// The losses in JS (kiln.loss.*): the Embind functions lossForward (a loss of JS tensors:
// the rank-0 value with its graph, or the unreduced losses for reduction "none") and
// lossValidate (a spec checked when kiln.loss.* creates it), and loss_from_js, which reads a
// spec for them and for the Learner (train_learner.cpp).
#include <emscripten/bind.h>

#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "config_js.hpp"
#include "train_loss.hpp"

using emscripten::val;

namespace kiln_js {
namespace {

using Json = kiln::config::Value;
using kiln::nn::loss::CrossEntropyLossConfig;
using kiln::nn::loss::Reduction;

/// huber ({"delta": d, "reduction": r}) or smooth_l1 ({"beta": b, "reduction": r}):
/// the fields of `body` into `out`; checks as the C++ configs' init.
void regression_loss_from_json(const Json& body, LossSpec& out, const char* name,
                               const char* field, double& value) {
  for (std::size_t i = 0; i < body.size(); ++i) {
    const std::string& key = body.keys()[i];
    const Json& v = body.items()[i];
    if (key == field) {
      if (!v.is_number()) {
        kiln::throw_error<kiln::ConfigError>("loss.", name, ": ", field, " must be a number, got ",
                                             v.dump());
      }
      value = v.get_double();
    } else if (key == "reduction") {
      if (v.is_string("sum")) {
        out.reduction = Reduction::Sum;
      } else if (!v.is_string("mean")) {
        kiln::throw_error<kiln::ConfigError>(
            "loss.", name, ": reduction must be \"mean\", \"sum\" or \"none\", got ", v.dump());
      }
    } else {
      kiln::throw_error<kiln::ConfigError>("loss.", name, ": unknown field \"", key,
                                           "\" (fields: ", field, ", reduction)");
    }
  }
  try {
    if (out.kind == LossSpec::Kind::Huber) {
      (void)kiln::nn::loss::HuberLossConfig(value).init();
    } else {
      kiln::nn::loss::SmoothL1LossConfig c;
      c.beta = value;
      (void)c.init();
    }
  } catch (const kiln::ConfigError& e) {
    kiln::throw_error<kiln::ConfigError>("loss.", name, ": ", without_cpp_prefix(e.what()));
  }
}

}  // namespace

/// A loss from its spec as a JS value ({"kind": "cross_entropy", ...}, config_js.hpp).
LossSpec loss_from_js(const val& spec) {
  const Json j = config_from_js(spec, "loss");
  const Json* kind_value = j.find("kind");
  if (!kind_value || !kind_value->is_string()) {
    kiln::throw_error<kiln::ConfigError>(
        "loss: expected {\"kind\": \"cross_entropy\" | \"mse\", ...}");
  }
  const std::string kind = kind_value->get_string();
  Json body = j;
  body.erase("kind");
  LossSpec out;
  if (const Json* r = body.find("reduction"); r && r->is_string("none")) {
    out.none = true;
    body.erase("reduction");
  }
  if (kind == "cross_entropy") {
    try {
      out.ce = CrossEntropyLossConfig::from_value(body);
      (void)out.ce.init<Inner>();  // checks smoothing and weights
    } catch (const kiln::ConfigError& e) {
      kiln::throw_error<kiln::ConfigError>("loss.crossEntropy: ", without_cpp_prefix(e.what()));
    }
    out.reduction = out.ce.reduction;
  } else if (kind == "binary_cross_entropy") {
    out.kind = LossSpec::Kind::BinaryCrossEntropy;
    out.cross_entropy = false;
    try {
      // pos_weight is no field of the config's JSON (BinaryCrossEntropyLossConfig): read here.
      std::optional<std::vector<float>> pos_weight;
      if (const Json* pw = body.find("pos_weight")) {
        pos_weight = kiln::config::decode<std::vector<float>>(*pw, "pos_weight");
        body.erase("pos_weight");
      }
      out.bce = kiln::nn::loss::BinaryCrossEntropyLossConfig::from_value(body);
      out.bce.pos_weight = std::move(pos_weight);
      (void)out.bce.init<Inner>();
    } catch (const kiln::ConfigError& e) {
      kiln::throw_error<kiln::ConfigError>("loss.binaryCrossEntropy: ",
                                           without_cpp_prefix(e.what()));
    }
    out.reduction = out.bce.reduction;
  } else if (kind == "mse") {
    out.kind = LossSpec::Kind::Mse;
    out.cross_entropy = false;
    for (std::size_t i = 0; i < body.size(); ++i) {
      const std::string& key = body.keys()[i];
      const Json& value = body.items()[i];
      if (key != "reduction") {
        kiln::throw_error<kiln::ConfigError>("loss.mse: unknown field \"", key,
                                             "\" (fields: reduction)");
      }
      if (value.is_string("sum")) {
        out.reduction = Reduction::Sum;
      } else if (!value.is_string("mean")) {
        kiln::throw_error<kiln::ConfigError>(
            "loss.mse: reduction must be \"mean\", \"sum\" or \"none\", got ", value.dump());
      }
    }
  } else if (kind == "huber") {
    out.kind = LossSpec::Kind::Huber;
    out.cross_entropy = false;
    regression_loss_from_json(body, out, "huber", "delta", out.delta);
  } else if (kind == "smooth_l1") {
    out.kind = LossSpec::Kind::SmoothL1;
    out.cross_entropy = false;
    regression_loss_from_json(body, out, "smoothL1", "beta", out.beta);
  } else {
    kiln::throw_error<kiln::ConfigError>(
        "loss: unknown kind \"", kind,
        "\" (cross_entropy, binary_cross_entropy, mse, huber, smooth_l1)");
  }
  return out;
}

/// A Learner's loss: cross-entropy or mse, reduced to one value.
LossSpec learner_loss_from_js(const val& loss) {
  LossSpec spec = loss_from_js(loss);
  if (spec.kind == LossSpec::Kind::BinaryCrossEntropy) {
    kiln::throw_error<kiln::ConfigError>(
        "Learner: loss must be crossEntropy, mse, huber or smoothL1 "
        "(binaryCrossEntropy is available as kiln.loss.binaryCrossEntropy().forward)");
  }
  if (spec.none)
    kiln::throw_error<kiln::ConfigError>(
        "Learner: the loss's reduction must be \"mean\" or \"sum\", not \"none\"");
  return spec;
}

namespace {

/// Checks a loss spec (kiln.loss.* check their options at creation).
void loss_validate(const val& loss) {
  guarded([&] { (void)loss_from_js(loss); });
}

/// A typed float tensor of rank D from a JS tensor (detached inside kiln.noGrad(fn)).
template <std::size_t D>
kiln::Tensor<AD, D> loss_input(const JsTensor& t, const char* op) {
  auto typed = to_typed<D>(t, op);
#if KILN_JS_AUTODIFF
  return grad_enabled() ? typed : typed.detach();
#else
  return typed;  // no graph on kiln-dl/inference's engine
#endif
}

/// kiln.loss.*(...).forward(logits, targets): the loss as a rank-0 [] tensor (graph kept), or the
/// unreduced losses for reduction "none".
JsTensor loss_forward(const val& loss, const JsTensor& logits, const JsTensor& targets) {
  return guarded([&] {
    const LossSpec spec = loss_from_js(loss);
    if (spec.kind == LossSpec::Kind::CrossEntropy) {
      const char* op = "crossEntropy.forward";
      const auto loss = spec.ce.init<AD>();
      const auto lg = loss_input<2>(logits, op);
      const auto tg = to_typed<1, kiln::Int>(targets, op);
      return spec.none ? from_typed(loss.forward_no_reduction(lg, tg)) : as_scalar(from_typed(loss.forward(lg, tg)));
    }
    const bool mse = spec.kind != LossSpec::Kind::BinaryCrossEntropy;  // a regression loss
    const char* op = spec.kind == LossSpec::Kind::Mse     ? "mse.forward"
                     : spec.kind == LossSpec::Kind::Huber ? "huber.forward"
                     : spec.kind == LossSpec::Kind::SmoothL1 ? "smoothL1.forward"
                                                             : "binaryCrossEntropy.forward";
    if (logits.shape().rank() != targets.shape().rank()) {
      kiln::throw_error<kiln::ShapeError>(op, ": logits ", logits.shape(), " and targets ",
                                          targets.shape(), " must have the same shape");
    }
    auto run = [&](auto rank) -> JsTensor {
      constexpr std::size_t D = decltype(rank)::value;
      const auto x = loss_input<D>(logits, op);
      if (mse) {
        const auto y = loss_input<D>(targets, op);
        const auto losses = spec.regression_no_reduction(x, y);
        return spec.none ? from_typed(losses) : as_scalar(from_typed(kiln::nn::loss::reduce(losses, spec.reduction)));
      }
      const auto l = spec.bce.init<AD>();
      if (!targets.is_float()) {
        const auto y = to_typed<D, kiln::Int>(targets, op);
        return spec.none ? from_typed(l.forward_no_reduction(x, y)) : as_scalar(from_typed(l.forward(x, y)));
      }
      const auto y = loss_input<D>(targets, op);
      return spec.none ? from_typed(l.forward_no_reduction(x, y)) : as_scalar(from_typed(l.forward(x, y)));
    };
    switch (logits.shape().rank()) {
      case 1: return run(std::integral_constant<std::size_t, 1>{});
      case 2: return run(std::integral_constant<std::size_t, 2>{});
      case 3: return run(std::integral_constant<std::size_t, 3>{});
      case 4: return run(std::integral_constant<std::size_t, 4>{});
      default:
        kiln::throw_error<kiln::RankError>(op, ": ranks 1 to 4 are supported, got ",
                                           logits.shape());
    }
  });
}

}  // namespace
}  // namespace kiln_js

EMSCRIPTEN_BINDINGS(kiln_train_loss) {
  using namespace kiln_js;
  emscripten::function("lossForward", &loss_forward);
  emscripten::function("lossValidate", &loss_validate);
}
