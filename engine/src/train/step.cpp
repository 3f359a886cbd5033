// The messages of train_step's non-finite guard (kiln/train/step.hpp).
#include "kiln/train/step.hpp"

#include <cmath>

namespace kiln::train::detail {

std::string describe_non_finite(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  return str_cat(value);
}

NonFiniteCount count_non_finite(const float* data, std::size_t n) {
  NonFiniteCount out;
  out.total = n;
  for (std::size_t i = 0; i < n; ++i) {
    const float v = data[i];
    if (std::isnan(v)) {
      ++out.nan;
    } else if (std::isinf(v)) {
      ++(v > 0 ? out.pos_inf : out.neg_inf);
    }
  }
  return out;
}

std::string describe_count(const NonFiniteCount& count) {
  std::string out;
  auto add = [&](std::size_t k, const char* what) {
    if (k == 0) return;
    if (!out.empty()) out += " and ";
    out += str_cat(k, " ", what);
  };
  add(count.nan, "NaN");
  add(count.pos_inf, "inf");
  add(count.neg_inf, "-inf");
  return str_cat(out, " of ", count.total, count.total == 1 ? " value" : " values");
}

void throw_refused_step(const StepPosition& at, std::string_view what) {
  const std::string where = at.epoch > 0 ? str_cat("epoch ", at.epoch, ", batch ", at.batch)
                                         : str_cat("step ", at.batch);
  throw_error<NonFiniteError>(at.op, ": ", what, " at ", where,
                              " (the step was not applied: the model is that of the previous "
                              "step)");
}

}  // namespace kiln::train::detail
