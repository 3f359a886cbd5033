// Non-template parts of the optimizers: learning-rate and config checks, the gradient
// clipping config's JSON form.
#include "kiln/optim/optimizer.hpp"

#include <cmath>
#include <string>

#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"
#include "kiln/optim/adam.hpp"
#include "kiln/optim/adamw.hpp"
#include "kiln/optim/decay.hpp"
#include "kiln/optim/grad_clipping.hpp"
#include "kiln/optim/momentum.hpp"
#include "kiln/optim/rmsprop.hpp"
#include "kiln/optim/sgd.hpp"

namespace kiln::optim {

void check_learning_rate(std::string_view op, LearningRate lr) {
  if (!(std::isfinite(lr) && lr >= 0.0)) {
    throw_error<ValueError>(op, ": learning rate must be finite and >= 0, got ", lr);
  }
}

namespace detail {

void check_finite_min(std::string_view op, std::string_view field, double value, double min) {
  if (!(std::isfinite(value) && value >= min)) {
    throw_error<ConfigError>(op, ": ", field, " must be finite and >= ", min, ", got ", value);
  }
}

void check_unit_interval(std::string_view op, std::string_view field, double value,
                         bool include_one) {
  const bool ok = value >= 0.0 && (include_one ? value <= 1.0 : value < 1.0);
  if (!ok) {
    throw_error<ConfigError>(op, ": ", field, " must be in [0, 1", include_one ? "]" : ")",
                             ", got ", value);
  }
}

}  // namespace detail

// ---------------------------------------------------------------- configs

void WeightDecayConfig::check(std::string_view op, std::string_view prefix) const {
  detail::check_finite_min(op, str_cat(prefix, "penalty"), penalty, 0.0);
}

void MomentumConfig::check(std::string_view op) const {
  detail::check_finite_min(op, "momentum.momentum", momentum, 0.0);
  if (!std::isfinite(dampening)) {
    throw_error<ConfigError>(op, ": momentum.dampening must be finite, got ", dampening);
  }
}

namespace {
void check_clipping(std::string_view op, std::string_view field,
                    const std::optional<GradientClippingConfig>& clipping) {
  if (!clipping) return;
  const char* variant = clipping->kind() == GradientClipping::Kind::Norm ? "Norm" : "Value";
  const double t = clipping->threshold();
  if (!(std::isfinite(t) && t > 0.0)) {
    throw_error<ConfigError>(op, ": ", field, ".", variant, " must be finite and > 0, got ", t);
  }
}
}  // namespace

void SgdConfig::check() const {
  constexpr std::string_view op = "SgdConfig::init";
  if (weight_decay) weight_decay->check(op);
  if (momentum) momentum->check(op);
  check_clipping(op, "gradient_clipping", gradient_clipping);
}

void AdamConfig::check() const {
  constexpr std::string_view op = "AdamConfig::init";
  detail::check_unit_interval(op, "beta_1", beta_1, false);
  detail::check_unit_interval(op, "beta_2", beta_2, false);
  detail::check_finite_min(op, "epsilon", epsilon, 0.0);
  if (weight_decay) weight_decay->check(op);
  check_clipping(op, "grad_clipping", grad_clipping);
}

void AdamWConfig::check() const {
  constexpr std::string_view op = "AdamWConfig::init";
  detail::check_unit_interval(op, "beta_1", beta_1, false);
  detail::check_unit_interval(op, "beta_2", beta_2, false);
  detail::check_finite_min(op, "epsilon", epsilon, 0.0);
  detail::check_finite_min(op, "weight_decay", weight_decay, 0.0);
  check_clipping(op, "grad_clipping", grad_clipping);
}

void RmsPropConfig::check() const {
  constexpr std::string_view op = "RmsPropConfig::init";
  detail::check_unit_interval(op, "alpha", alpha, true);
  detail::check_finite_min(op, "momentum", momentum, 0.0);
  detail::check_finite_min(op, "epsilon", epsilon, 0.0);
  if (weight_decay) weight_decay->check(op);
  check_clipping(op, "grad_clipping", grad_clipping);
}

// ---------------------------------------------------------------- gradient clipping

GradientClipping GradientClippingConfig::init() const {
  check_clipping("GradientClippingConfig::init", "GradientClippingConfig", *this);
  return kind_ == Kind::Norm ? GradientClipping::norm(threshold_)
                             : GradientClipping::value(threshold_);
}

config::Value GradientClippingConfig::to_value() const {
  config::Value j = config::Value::object();
  j[kind_ == Kind::Norm ? "Norm" : "Value"] = threshold_;
  return j;
}

GradientClippingConfig GradientClippingConfig::from_value(const config::Value& j) {
  if (!j.is_object() || j.size() != 1) {
    throw_error<ConfigError>(
        "GradientClippingConfig: expected an object with one key, "
        "\"Value\" or \"Norm\", got ",
        j.is_object() ? str_cat("an object with ", j.size(), " keys") : config::describe(j));
  }
  const std::string& key = j.keys()[0];
  Kind kind;
  if (key == "Value") {
    kind = Kind::Value;
  } else if (key == "Norm") {
    kind = Kind::Norm;
  } else {
    throw_error<ConfigError>("GradientClippingConfig: unknown variant \"", key,
                             "\" (variants: Value, Norm)");
  }
  const double threshold =
      config::decode<double>(j.items()[0], str_cat("GradientClippingConfig.", key));
  return GradientClippingConfig(kind, threshold);
}

}  // namespace kiln::optim
