// Learning-rate schedulers: Burn's formulas and config checks (crates/burn-optim/src/
// lr_scheduler/{constant,step,exponential,linear,cosine,noam}.rs).
#include "kiln/optim/lr_scheduler.hpp"

#include <algorithm>
#include <cmath>

#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"

namespace kiln::optim {
namespace {

constexpr double kPi = 3.14159265358979323846;

void check_finite(std::string_view op, std::string_view field, double value) {
  if (!std::isfinite(value)) {
    throw_error<ConfigError>(op, ": ", field, " must be finite, got ", value);
  }
}

/// value in (0, 1] (include_zero: [0, 1]).
void check_rate(std::string_view op, std::string_view field, double value, bool include_zero) {
  const bool ok = (include_zero ? value >= 0.0 : value > 0.0) && value <= 1.0;
  if (!ok) {
    throw_error<ConfigError>(op, ": ", field, " must be in ", include_zero ? "[0" : "(0",
                             ", 1], got ", value);
  }
}

void check_positive(std::string_view op, std::string_view field, std::int64_t value) {
  if (value < 1) throw_error<ConfigError>(op, ": ", field, " must be >= 1, got ", value);
}

}  // namespace

ConstantLr ConstantLrSchedulerConfig::init() const {
  constexpr std::string_view op = "ConstantLrSchedulerConfig::init";
  if (!(std::isfinite(lr) && lr >= 0.0)) {
    throw_error<ConfigError>(op, ": lr must be finite and >= 0, got ", lr);
  }
  return ConstantLr(lr);
}

double StepLrScheduler::step() {
  ++iteration_;
  return initial_lr_ * std::pow(gamma_, static_cast<double>(iteration_ / step_size_));
}

StepLrScheduler StepLrSchedulerConfig::init() const {
  constexpr std::string_view op = "StepLrSchedulerConfig::init";
  check_positive(op, "step_size", step_size);
  check_finite(op, "initial_lr", initial_lr);
  check_finite(op, "gamma", gamma);
  return StepLrScheduler(initial_lr, step_size, gamma);
}

ExponentialLrScheduler ExponentialLrSchedulerConfig::init() const {
  constexpr std::string_view op = "ExponentialLrSchedulerConfig::init";
  check_rate(op, "initial_lr", initial_lr, false);
  check_rate(op, "gamma", gamma, false);
  return ExponentialLrScheduler(initial_lr, gamma);
}

LinearLrScheduler LinearLrSchedulerConfig::init() const {
  constexpr std::string_view op = "LinearLrSchedulerConfig::init";
  check_rate(op, "initial_lr", initial_lr, false);
  check_rate(op, "final_lr", final_lr, true);
  check_positive(op, "num_iters", num_iters);
  return LinearLrScheduler(initial_lr, final_lr, num_iters);
}

double CosineAnnealingLrScheduler::step() {
  current_iter_ = (current_iter_ + 1) % (num_iters_ + 1);
  const double progress = static_cast<double>(current_iter_) / static_cast<double>(num_iters_);
  return min_lr_ + 0.5 * (max_lr_ - min_lr_) * (1.0 + std::cos(progress * kPi));
}

CosineAnnealingLrScheduler CosineAnnealingLrSchedulerConfig::init() const {
  constexpr std::string_view op = "CosineAnnealingLrSchedulerConfig::init";
  check_rate(op, "initial_lr", initial_lr, false);
  if (!(min_lr >= 0.0 && min_lr <= initial_lr)) {
    throw_error<ConfigError>(op, ": min_lr must be in [0, initial_lr] = [0, ", initial_lr,
                             "], got ", min_lr);
  }
  check_positive(op, "num_iters", num_iters);
  return CosineAnnealingLrScheduler(initial_lr, min_lr, num_iters);
}

double NoamLrScheduler::step() {
  step_ += 1.0;
  const double warmup = step_ * std::pow(warmup_steps_, -1.5);
  const double decay = std::pow(step_, -0.5);
  return factor_ * std::pow(model_size_, -0.5) * std::min(decay, warmup);
}

NoamLrScheduler NoamLrSchedulerConfig::init() const {
  constexpr std::string_view op = "NoamLrSchedulerConfig::init";
  check_finite(op, "factor", factor);
  check_positive(op, "warmup_steps", warmup_steps);
  check_positive(op, "model_size", model_size);
  return NoamLrScheduler(factor, warmup_steps, model_size);
}

}  // namespace kiln::optim
