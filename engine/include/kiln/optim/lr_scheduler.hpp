#pragma once
/// Learning-rate schedulers (Burn's `burn::lr_scheduler`, crates/burn-optim/src/lr_scheduler/):
/// each is built from a config by `init()` and returns, on every `step()`, the learning rate
/// of the current iteration (the first call gives the first iteration's rate):
///
///   auto scheduler = CosineAnnealingLrSchedulerConfig(1e-3, 1000).init();
///   for (...) { model = optim.step(scheduler.step(), model, grads); }
///
/// i counts the calls from 0 (the first step() is i = 0). Formulas and checks are Burn's:
///   ConstantLr            lr
///   StepLrScheduler       initial_lr · gamma^floor(i / step_size)
///   ExponentialLr...      initial_lr · gamma^i (computed as Burn does, by repeated products)
///   LinearLrScheduler     initial_lr + (final_lr - initial_lr) · min(i, num_iters) / num_iters
///   CosineAnnealing...    min_lr + (initial_lr - min_lr) · (1 + cos(π · c / num_iters)) / 2,
///                         c = i mod (num_iters + 1) (restarts after num_iters, SGDR)
///   NoamLrScheduler       factor · model_size^-0.5 · min(n^-0.5, n · warmup_steps^-1.5),
///                         n = i + 1 (Attention Is All You Need, https://arxiv.org/abs/1706.03762)
/// Config checks throw ConfigError naming the field where Burn's `init` returns an error.
#include <concepts>
#include <cstdint>

#include "kiln/config/config.hpp"

namespace kiln::optim {

/// A learning-rate scheduler: `step()` returns the next learning rate (Burn's `LrScheduler`).
template <class S>
concept LrScheduler = requires(S s) {
  { s.step() } -> std::same_as<double>;
};

/// The same learning rate at every step (Burn's `ConstantLr`).
class ConstantLr {
 public:
  explicit ConstantLr(double lr) : lr_(lr) {}
  double step() { return lr_; }

 private:
  double lr_;
};

/// Configuration of ConstantLr.
struct ConstantLrSchedulerConfig {
  double lr;  ///< the learning rate (finite, >= 0)
  explicit ConstantLrSchedulerConfig(double lr) : lr(lr) {}
  KILN_CONFIG(ConstantLrSchedulerConfig, (lr), ())
  /// Throws: ConfigError unless lr is finite and >= 0.
  ConstantLr init() const;
};

/// initial_lr · gamma^floor(i / step_size) (Burn's `StepLrScheduler`, torch's StepLR).
class StepLrScheduler {
 public:
  StepLrScheduler(double initial_lr, std::int64_t step_size, double gamma)
      : initial_lr_(initial_lr), step_size_(step_size), gamma_(gamma) {}
  double step();

 private:
  double initial_lr_;
  std::int64_t step_size_;
  double gamma_;
  std::int64_t iteration_ = -1;
};

/// Configuration of StepLrScheduler (Burn's `StepLrSchedulerConfig`).
struct StepLrSchedulerConfig {
  double initial_lr;       ///< rate of the first step_size iterations
  std::int64_t step_size;  ///< iterations between two multiplications by gamma (>= 1)
  double gamma = 0.1;      ///< factor applied every step_size iterations
  StepLrSchedulerConfig(double initial_lr, std::int64_t step_size)
      : initial_lr(initial_lr), step_size(step_size) {}
  KILN_CONFIG(StepLrSchedulerConfig, (initial_lr, step_size), (gamma))
  /// Throws: ConfigError if step_size < 1 or a value is not finite (Burn only warns about
  /// initial_lr <= 0 and gamma outside (0, 1), and so accepts them).
  StepLrScheduler init() const;
};

/// initial_lr · gamma^i (Burn's `ExponentialLrScheduler`).
class ExponentialLrScheduler {
 public:
  ExponentialLrScheduler(double initial_lr, double gamma)
      : previous_lr_(initial_lr / gamma), gamma_(gamma) {}
  double step() { return previous_lr_ *= gamma_; }

 private:
  double previous_lr_;
  double gamma_;
};

/// Configuration of ExponentialLrScheduler (Burn's `ExponentialLrSchedulerConfig`).
struct ExponentialLrSchedulerConfig {
  double initial_lr;  ///< rate of the first iteration, in (0, 1]
  double gamma;       ///< factor per iteration, in (0, 1]
  ExponentialLrSchedulerConfig(double initial_lr, double gamma)
      : initial_lr(initial_lr), gamma(gamma) {}
  KILN_CONFIG(ExponentialLrSchedulerConfig, (initial_lr, gamma), ())
  /// Throws: ConfigError if initial_lr or gamma is outside (0, 1].
  ExponentialLrScheduler init() const;
};

/// From initial_lr to final_lr in num_iters equal steps, then final_lr (Burn's
/// `LinearLrScheduler`).
class LinearLrScheduler {
 public:
  LinearLrScheduler(double initial_lr, double final_lr, std::int64_t num_iters)
      : final_lr_(final_lr),
        step_size_((final_lr - initial_lr) / static_cast<double>(num_iters)),
        remaining_iters_(num_iters + 1) {}
  double step() {
    if (remaining_iters_ > 0) --remaining_iters_;
    return final_lr_ - step_size_ * static_cast<double>(remaining_iters_);
  }

 private:
  double final_lr_;
  double step_size_;
  std::int64_t remaining_iters_;
};

/// Configuration of LinearLrScheduler (Burn's `LinearLrSchedulerConfig`).
struct LinearLrSchedulerConfig {
  double initial_lr;       ///< rate of the first iteration, in (0, 1]
  double final_lr;         ///< rate from iteration num_iters on, in [0, 1]
  std::int64_t num_iters;  ///< iterations to go from initial_lr to final_lr (>= 1)
  LinearLrSchedulerConfig(double initial_lr, double final_lr, std::int64_t num_iters)
      : initial_lr(initial_lr), final_lr(final_lr), num_iters(num_iters) {}
  KILN_CONFIG(LinearLrSchedulerConfig, (initial_lr, final_lr, num_iters), ())
  /// Throws: ConfigError if initial_lr is outside (0, 1], final_lr outside [0, 1] or
  ///         num_iters < 1.
  LinearLrScheduler init() const;
};

/// Cosine annealing with warm restarts every num_iters + 1 iterations (Burn's
/// `CosineAnnealingLrScheduler`; SGDR, https://arxiv.org/abs/1608.03983).
class CosineAnnealingLrScheduler {
 public:
  CosineAnnealingLrScheduler(double initial_lr, double min_lr, std::int64_t num_iters)
      : max_lr_(initial_lr), min_lr_(min_lr), num_iters_(num_iters) {}
  double step();

 private:
  double max_lr_;
  double min_lr_;
  std::int64_t num_iters_;
  std::int64_t current_iter_ = -1;
};

/// Configuration of CosineAnnealingLrScheduler (Burn's `CosineAnnealingLrSchedulerConfig`).
struct CosineAnnealingLrSchedulerConfig {
  double initial_lr;       ///< rate at the start of each cycle, in (0, 1]
  double min_lr = 0.0;     ///< rate at the end of each cycle, in [0, initial_lr]
  std::int64_t num_iters;  ///< iterations from initial_lr to min_lr (>= 1)
  CosineAnnealingLrSchedulerConfig(double initial_lr, std::int64_t num_iters)
      : initial_lr(initial_lr), num_iters(num_iters) {}
  KILN_CONFIG(CosineAnnealingLrSchedulerConfig, (initial_lr, num_iters), (min_lr))
  /// Throws: ConfigError if initial_lr is outside (0, 1], min_lr outside [0, initial_lr] or
  ///         num_iters < 1.
  CosineAnnealingLrScheduler init() const;
};

/// Warm-up then inverse-square-root decay (Burn's `NoamLrScheduler`).
class NoamLrScheduler {
 public:
  NoamLrScheduler(double factor, std::int64_t warmup_steps, std::int64_t model_size)
      : factor_(factor),
        warmup_steps_(static_cast<double>(warmup_steps)),
        model_size_(static_cast<double>(model_size)) {}
  double step();

 private:
  double factor_;
  double warmup_steps_;
  double model_size_;
  double step_ = 0.0;
};

/// Configuration of NoamLrScheduler (Burn's `NoamLrSchedulerConfig`).
struct NoamLrSchedulerConfig {
  double factor;                     ///< overall scale
  std::int64_t warmup_steps = 4000;  ///< iterations of linear warm-up (>= 1)
  std::int64_t model_size = 512;     ///< d_model of the transformer (>= 1)
  explicit NoamLrSchedulerConfig(double factor) : factor(factor) {}
  KILN_CONFIG(NoamLrSchedulerConfig, (factor), (warmup_steps, model_size))
  /// Throws: ConfigError if warmup_steps < 1, model_size < 1 or factor is not finite.
  NoamLrScheduler init() const;
};

}  // namespace kiln::optim
