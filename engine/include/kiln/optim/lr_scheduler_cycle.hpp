#pragma once
/// Two more learning-rate schedulers of the lr_scheduler.hpp family, with PyTorch's rules
/// (torch/optim/lr_scheduler.py, PyTorch 1.13; Burn has neither):
///
///   OneCycleLrScheduler   the 1cycle policy (Smith & Topin, https://arxiv.org/abs/1708.07120,
///                         torch.optim.lr_scheduler.OneCycleLR): an LrScheduler (`step()`).
///   ReduceLrOnPlateau     metric-driven (torch.optim.lr_scheduler.ReduceLROnPlateau):
///                         `step(metric)` returns the rate to use from then on.
///
///   auto one_cycle = OneCycleLrSchedulerConfig(/*max_lr=*/1e-2, /*total_steps=*/1000).init();
///   for (...) { model = optim.step(one_cycle.step(), model, grads); }
///
///   auto plateau = ReduceLrOnPlateauConfig(/*initial_lr=*/1e-2).with_patience(2).init();
///   for (epoch ...) { ... lr = plateau.step(valid_loss); }
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "kiln/config/config.hpp"

namespace kiln::optim {

/// The 1cycle schedule (torch.optim.lr_scheduler.OneCycleLR). With T = total_steps,
/// initial_lr = max_lr / div_factor and min_lr = initial_lr / final_div_factor, step t
/// (t = 0 on the first call of step()) lies in one of the phases
///   two phases:   [0, pct_start·T - 1]: initial_lr -> max_lr; [.., T - 1]: max_lr -> min_lr
///   three phases: [0, pct_start·T - 1]: initial_lr -> max_lr;
///                 [.., 2·pct_start·T - 2]: max_lr -> initial_lr; [.., T - 1]: initial_lr -> min_lr
/// (the bounds are step indices, not counts: the peak is at t = pct_start·T - 1), and within
/// a phase from `start` to `end`, pct = (t - phase_start) / (phase_end - phase_start) and
///   cos:    end + (start - end) / 2 · (1 + cos(π·pct))
///   linear: start + pct · (end - start).
/// momentum() is the cycled momentum PyTorch sets at the same step (max_momentum when the rate
/// is lowest, base_momentum at max_lr, annealed the same way; nan with cycle_momentum false,
/// where PyTorch leaves the optimizer's momentum alone). Difference from PyTorch: Kiln's
/// optimizers are built from immutable configs and do NOT take this momentum; read it to
/// report it.
/// Only t < total_steps is defined (PyTorch 1.13 returns a re-rising rate at t = T,
/// pytorch#91765, and raises after): step() number T + 1 throws.
class OneCycleLrScheduler {
 public:
  /// One phase: steps up to `end_step` go from start_* to end_*.
  struct Phase {
    double end_step;
    double start_lr, end_lr;
    double start_momentum, end_momentum;
  };
  OneCycleLrScheduler(std::vector<Phase> phases, std::int64_t total_steps, bool cosine,
                      bool cycle_momentum)
      : phases_(std::move(phases)),
        total_steps_(total_steps),
        cosine_(cosine),
        cycle_momentum_(cycle_momentum) {}

  /// The rate of the next step. Throws: StateError past total_steps steps.
  double step();
  /// The momentum of the last step() (nan before the first, or without cycle_momentum).
  double momentum() const noexcept { return momentum_; }
  /// step() calls so far.
  std::int64_t steps_taken() const noexcept { return step_ + 1; }

 private:
  double anneal(double start, double end, double pct) const;
  std::vector<Phase> phases_;
  std::int64_t total_steps_;
  bool cosine_;
  bool cycle_momentum_;
  std::int64_t step_ = -1;
  double momentum_ = std::numeric_limits<double>::quiet_NaN();
};

/// Configuration of OneCycleLrScheduler (torch.optim.lr_scheduler.OneCycleLR's arguments and
/// defaults; `epochs`/`steps_per_epoch` are written as total_steps = epochs·steps_per_epoch).
struct OneCycleLrSchedulerConfig {
  double max_lr;                        ///< the peak rate (finite, > 0)
  std::int64_t total_steps;             ///< steps in the cycle (>= 2)
  double pct_start = 0.3;               ///< fraction of the cycle spent increasing, in (0, 1)
  std::string anneal_strategy = "cos";  ///< "cos" or "linear"
  bool cycle_momentum = true;           ///< report the cycled momentum (see momentum())
  double base_momentum = 0.85;          ///< momentum at max_lr
  double max_momentum = 0.95;           ///< momentum at the lowest rates
  double div_factor = 25.0;             ///< initial_lr = max_lr / div_factor (> 0)
  double final_div_factor = 1e4;        ///< min_lr = initial_lr / final_div_factor (> 0)
  bool three_phase = false;             ///< back to initial_lr before annealing to min_lr
  OneCycleLrSchedulerConfig(double max_lr, std::int64_t total_steps)
      : max_lr(max_lr), total_steps(total_steps) {}
  KILN_CONFIG(OneCycleLrSchedulerConfig, (max_lr, total_steps),
              (pct_start, anneal_strategy, cycle_momentum, base_momentum, max_momentum,
               div_factor, final_div_factor, three_phase))
  /// Throws: ConfigError naming the field unless max_lr, div_factor and final_div_factor are
  ///         finite and > 0, pct_start in (0, 1), anneal_strategy "cos" or "linear", the
  ///         momenta finite, and total_steps large enough that every phase spans at least one
  ///         step (PyTorch divides by zero there).
  OneCycleLrScheduler init() const;
};

/// Lowers the rate when a metric stops improving (torch.optim.lr_scheduler.ReduceLROnPlateau):
/// on each step(metric):
///   better: min/rel a < best·(1 - threshold); min/abs a < best - threshold;
///           max/rel a > best·(1 + threshold); max/abs a > best + threshold
///   better: best = a, bad = 0; else bad += 1 (a nan metric is never better)
///   in cooldown: cooldown_counter -= 1, bad = 0
///   bad > patience: lr = max(lr·factor, min_lr) unless that changes lr by <= eps;
///                   cooldown_counter = cooldown; bad = 0
/// best starts at +inf (min) / -inf (max). As PyTorch, rel mode misjudges negative metrics
/// (pytorch#47513).
class ReduceLrOnPlateau {
 public:
  /// What changes on step(): enough to resume a run exactly (checkpoints).
  struct State {
    double lr = 0;
    double best = 0;
    std::int64_t num_bad_epochs = 0;
    std::int64_t cooldown_counter = 0;
    std::int64_t steps = 0;  ///< step() calls so far
  };

  ReduceLrOnPlateau(double initial_lr, bool mode_max, double factor, std::int64_t patience,
                    double threshold, bool threshold_abs, std::int64_t cooldown, double min_lr,
                    double eps);

  /// Feeds one metric value; returns the rate to use from now on.
  double step(double metric);
  /// The current rate.
  double lr() const noexcept { return state_.lr; }
  const State& state() const noexcept { return state_; }
  /// Replaces the state (from state() of a scheduler with the same config).
  /// Throws: ValueError if a count is negative or the rate is not finite and >= 0.
  void load_state(const State& state);

 private:
  bool is_better(double a) const;
  bool mode_max_;
  double factor_;
  std::int64_t patience_;
  double threshold_;
  bool threshold_abs_;
  std::int64_t cooldown_;
  double min_lr_;
  double eps_;
  State state_;
};

/// Configuration of ReduceLrOnPlateau (torch.optim.lr_scheduler.ReduceLROnPlateau's arguments
/// and defaults; initial_lr is the optimizer's rate there).
struct ReduceLrOnPlateauConfig {
  double initial_lr;                    ///< the rate until the first reduction (finite, >= 0)
  std::string mode = "min";             ///< "min" (a loss) or "max" (an accuracy)
  double factor = 0.1;                  ///< new_lr = lr·factor, in [0, 1)
  std::int64_t patience = 10;           ///< non-improving steps tolerated (>= 0)
  double threshold = 1e-4;              ///< what counts as an improvement (finite, >= 0)
  std::string threshold_mode = "rel";   ///< "rel" or "abs"
  std::int64_t cooldown = 0;            ///< steps to wait after a reduction (>= 0)
  double min_lr = 0.0;                  ///< lower bound of the rate (finite, >= 0)
  double eps = 1e-8;                    ///< smaller changes of the rate are skipped (>= 0)
  explicit ReduceLrOnPlateauConfig(double initial_lr) : initial_lr(initial_lr) {}
  KILN_CONFIG(ReduceLrOnPlateauConfig, (initial_lr),
              (mode, factor, patience, threshold, threshold_mode, cooldown, min_lr, eps))
  /// Throws: ConfigError naming the field when a value is outside the ranges above (PyTorch
  ///         checks factor < 1, mode and threshold_mode).
  ReduceLrOnPlateau init() const;
};

}  // namespace kiln::optim
