// OneCycle and ReduceLROnPlateau: PyTorch 1.13's rules (torch/optim/lr_scheduler.py,
// OneCycleLR.get_lr and ReduceLROnPlateau.step / _reduce_lr / is_better).
#include "kiln/optim/lr_scheduler_cycle.hpp"

#include <algorithm>
#include <cmath>
#include <string_view>

#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"

namespace kiln::optim {
namespace {

constexpr double kPi = 3.14159265358979323846;

void check_positive_finite(std::string_view op, std::string_view field, double value) {
  if (!(std::isfinite(value) && value > 0.0)) {
    throw_error<ConfigError>(op, ": ", field, " must be finite and > 0, got ", value);
  }
}

void check_non_negative(std::string_view op, std::string_view field, double value) {
  if (!(std::isfinite(value) && value >= 0.0)) {
    throw_error<ConfigError>(op, ": ", field, " must be finite and >= 0, got ", value);
  }
}

}  // namespace

// ---------------------------------------------------------------- OneCycle

double OneCycleLrScheduler::anneal(double start, double end, double pct) const {
  if (cosine_) return end + (start - end) / 2.0 * (std::cos(kPi * pct) + 1.0);
  return (end - start) * pct + start;
}

double OneCycleLrScheduler::step() {
  if (step_ + 1 >= total_steps_) {
    throw_error<StateError>(
        "OneCycleLrScheduler::step: the schedule has total_steps = ", total_steps_,
        " steps, this is step ", step_ + 2, " (make total_steps cover the whole run)");
  }
  ++step_;
  const double t = static_cast<double>(step_);
  double start_step = 0.0;
  for (std::size_t i = 0; i < phases_.size(); ++i) {
    const Phase& phase = phases_[i];
    if (t <= phase.end_step || i + 1 == phases_.size()) {
      const double pct = (t - start_step) / (phase.end_step - start_step);
      if (cycle_momentum_) momentum_ = anneal(phase.start_momentum, phase.end_momentum, pct);
      return anneal(phase.start_lr, phase.end_lr, pct);
    }
    start_step = phase.end_step;
  }
  return phases_.back().end_lr;  // unreachable: the last phase always matches
}

OneCycleLrScheduler OneCycleLrSchedulerConfig::init() const {
  constexpr std::string_view op = "OneCycleLrSchedulerConfig::init";
  check_positive_finite(op, "max_lr", max_lr);
  check_positive_finite(op, "div_factor", div_factor);
  check_positive_finite(op, "final_div_factor", final_div_factor);
  if (!(pct_start > 0.0 && pct_start < 1.0)) {
    throw_error<ConfigError>(op, ": pct_start must be in (0, 1), got ", pct_start);
  }
  if (anneal_strategy != "cos" && anneal_strategy != "linear") {
    throw_error<ConfigError>(op, ": anneal_strategy must be \"cos\" or \"linear\", got \"",
                             anneal_strategy, "\"");
  }
  if (!std::isfinite(base_momentum) || !std::isfinite(max_momentum)) {
    throw_error<ConfigError>(op, ": base_momentum and max_momentum must be finite, got ",
                             base_momentum, " and ", max_momentum);
  }
  if (total_steps < 2) {
    throw_error<ConfigError>(op, ": total_steps must be >= 2, got ", total_steps);
  }
  const double initial_lr = max_lr / div_factor;
  const double min_lr = initial_lr / final_div_factor;
  // PyTorch computes the bounds in floating point: float(pct_start * total_steps) - 1.
  const double t = static_cast<double>(total_steps);
  std::vector<OneCycleLrScheduler::Phase> phases;
  if (three_phase) {
    phases.push_back({pct_start * t - 1.0, initial_lr, max_lr, max_momentum, base_momentum});
    phases.push_back({2.0 * pct_start * t - 2.0, max_lr, initial_lr, base_momentum, max_momentum});
    phases.push_back({t - 1.0, initial_lr, min_lr, max_momentum, max_momentum});
  } else {
    phases.push_back({pct_start * t - 1.0, initial_lr, max_lr, max_momentum, base_momentum});
    phases.push_back({t - 1.0, max_lr, min_lr, base_momentum, max_momentum});
  }
  double previous = 0.0;
  for (const auto& phase : phases) {
    if (!(phase.end_step > previous)) {
      throw_error<ConfigError>(op, ": total_steps = ", total_steps, " with pct_start = ", pct_start,
                               three_phase ? " (three phases)" : "",
                               " leaves a phase without steps (phase ends ", previous, " and ",
                               phase.end_step, "): raise total_steps or pct_start");
    }
    previous = phase.end_step;
  }
  return OneCycleLrScheduler(std::move(phases), total_steps, anneal_strategy == "cos",
                             cycle_momentum);
}

// ---------------------------------------------------------------- ReduceLROnPlateau

ReduceLrOnPlateau::ReduceLrOnPlateau(double initial_lr, bool mode_max, double factor,
                                     std::int64_t patience, double threshold, bool threshold_abs,
                                     std::int64_t cooldown, double min_lr, double eps)
    : mode_max_(mode_max),
      factor_(factor),
      patience_(patience),
      threshold_(threshold),
      threshold_abs_(threshold_abs),
      cooldown_(cooldown),
      min_lr_(min_lr),
      eps_(eps) {
  state_.lr = initial_lr;
  state_.best = mode_max ? -std::numeric_limits<double>::infinity()
                         : std::numeric_limits<double>::infinity();
}

bool ReduceLrOnPlateau::is_better(double a) const {
  const double best = state_.best;
  if (!mode_max_) {
    return threshold_abs_ ? a < best - threshold_ : a < best * (1.0 - threshold_);
  }
  return threshold_abs_ ? a > best + threshold_ : a > best * (1.0 + threshold_);
}

double ReduceLrOnPlateau::step(double metric) {
  ++state_.steps;
  if (is_better(metric)) {
    state_.best = metric;
    state_.num_bad_epochs = 0;
  } else {
    ++state_.num_bad_epochs;
  }
  if (state_.cooldown_counter > 0) {
    --state_.cooldown_counter;
    state_.num_bad_epochs = 0;
  }
  if (state_.num_bad_epochs > patience_) {
    const double new_lr = std::max(state_.lr * factor_, min_lr_);
    if (state_.lr - new_lr > eps_) state_.lr = new_lr;
    state_.cooldown_counter = cooldown_;
    state_.num_bad_epochs = 0;
  }
  return state_.lr;
}

void ReduceLrOnPlateau::load_state(const State& state) {
  constexpr std::string_view op = "ReduceLrOnPlateau::load_state";
  if (!(std::isfinite(state.lr) && state.lr >= 0.0)) {
    throw_error<ValueError>(op, ": lr must be finite and >= 0, got ", state.lr);
  }
  if (state.num_bad_epochs < 0 || state.cooldown_counter < 0 || state.steps < 0) {
    throw_error<ValueError>(op, ": counts must be >= 0, got num_bad_epochs ", state.num_bad_epochs,
                            ", cooldown_counter ", state.cooldown_counter, ", steps ", state.steps);
  }
  if (std::isnan(state.best)) throw_error<ValueError>(op, ": best must not be nan");
  state_ = state;
}

ReduceLrOnPlateau ReduceLrOnPlateauConfig::init() const {
  constexpr std::string_view op = "ReduceLrOnPlateauConfig::init";
  check_non_negative(op, "initial_lr", initial_lr);
  if (mode != "min" && mode != "max") {
    throw_error<ConfigError>(op, ": mode must be \"min\" or \"max\", got \"", mode, "\"");
  }
  if (threshold_mode != "rel" && threshold_mode != "abs") {
    throw_error<ConfigError>(op, ": threshold_mode must be \"rel\" or \"abs\", got \"",
                             threshold_mode, "\"");
  }
  if (!(factor >= 0.0 && factor < 1.0)) {
    throw_error<ConfigError>(op, ": factor must be in [0, 1), got ", factor);
  }
  if (patience < 0) throw_error<ConfigError>(op, ": patience must be >= 0, got ", patience);
  if (cooldown < 0) throw_error<ConfigError>(op, ": cooldown must be >= 0, got ", cooldown);
  check_non_negative(op, "threshold", threshold);
  check_non_negative(op, "min_lr", min_lr);
  check_non_negative(op, "eps", eps);
  return ReduceLrOnPlateau(initial_lr, mode == "max", factor, patience, threshold,
                           threshold_mode == "abs", cooldown, min_lr, eps);
}

}  // namespace kiln::optim
