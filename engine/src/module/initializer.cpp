// Initializer: fans, the formulas of torch.nn.init, printing and Burn's serde JSON form.
#include "kiln/module/initializer.hpp"

#include <cmath>
#include <cstdlib>
#include <initializer_list>
#include <string>

#include "kiln/core/str_cat.hpp"

namespace kiln::nn {
namespace {

using Json = config::Value;

/// The shortest of 15, 16 or 17 significant digits that reads back as the same double, with
/// ".0" on whole numbers: Rust's `{:?}` of an f64 (1.0, 0.5773502691896258).
std::string num(double v) {
  std::string text;
  for (int precision = 15; precision <= 17; ++precision) {
    text = str_cat(fmt_g(v, precision));
    if (!std::isfinite(v) || std::strtod(text.c_str(), nullptr) == v) break;
  }
  if (std::isfinite(v) && text.find_first_of(".e") == std::string::npos) text += ".0";
  return text;
}

void check_finite(std::string_view variant, std::string_view field, double v) {
  if (!std::isfinite(v)) {
    throw_error<ConfigError>("Initializer::", variant, ": ", field, " must be finite, got ", v);
  }
}

void check_gain(std::string_view variant, double gain) {
  if (!(std::isfinite(gain) && gain >= 0.0)) {
    throw_error<ConfigError>("Initializer::", variant, ": gain must be finite and >= 0, got ",
                             gain);
  }
}

std::int64_t need_fan(std::string_view variant, std::string_view which,
                      std::optional<std::int64_t> fan) {
  if (!fan) {
    throw_error<ConfigError>("Initializer::", variant, ": needs ", which,
                             ", none was given (pass the fans, or a shape of rank >= 2)");
  }
  if (*fan < 1) {
    throw_error<ConfigError>("Initializer::", variant, ": ", which, " must be >= 1, got ", *fan);
  }
  return *fan;
}

/// U[-bound, bound), or the constant 0 when bound is 0 (gain 0).
Initializer::Sampling symmetric_uniform(double bound) {
  Initializer::Sampling s;
  if (bound == 0.0) {
    s.constant = 0.0;
  } else {
    s.distribution = Distribution::uniform(-bound, bound);
  }
  return s;
}

Initializer::Sampling centred_normal(double std) {
  Initializer::Sampling s;
  s.distribution = Distribution::normal(0.0, std);
  return s;
}

// ---- JSON helpers: every field required, no unknown fields.

const Json& field(const Json& body, std::string_view variant, std::string_view name) {
  const Json* v = body.find(name);
  if (!v) {
    throw_error<ConfigError>("Initializer::", variant, ": missing field \"", name, "\"");
  }
  return *v;
}

double number_field(const Json& body, std::string_view variant, std::string_view name) {
  const Json& v = field(body, variant, name);
  if (!v.is_number()) {
    throw_error<ConfigError>("Initializer::", variant, ".", name, ": expected a number, got ",
                             v.dump());
  }
  return v.get_double();
}

bool bool_field(const Json& body, std::string_view variant, std::string_view name) {
  const Json& v = field(body, variant, name);
  if (!v.is_boolean()) {
    throw_error<ConfigError>("Initializer::", variant, ".", name, ": expected a boolean, got ",
                             v.dump());
  }
  return v.get_bool();
}

void only_fields(const Json& body, std::string_view variant,
                 std::initializer_list<std::string_view> names) {
  if (!body.is_object()) {
    throw_error<ConfigError>("Initializer::", variant, ": expected an object of fields, got ",
                             body.dump());
  }
  for (const std::string& key : body.keys()) {
    bool known = false;
    for (auto n : names) known = known || n == key;
    if (!known) {
      throw_error<ConfigError>("Initializer::", variant, ": unknown field \"", key, "\"");
    }
  }
}

constexpr const char* kVariants =
    "Constant, Zeros, Ones, Uniform, Normal, KaimingUniform, KaimingNormal, XavierUniform, "
    "XavierNormal";

}  // namespace

Fans fan_in_and_fan_out(const Shape& shape) {
  if (shape.rank() < 2) {
    throw_error<ValueError>(
        "fan_in_and_fan_out: fan in and fan out need a shape of rank >= 2, "
        "got ",
        shape);
  }
  std::int64_t receptive_field = 1;
  for (std::size_t i = 2; i < shape.rank(); ++i) receptive_field *= shape[i];
  return Fans{shape[1] * receptive_field, shape[0] * receptive_field};
}

std::string_view Initializer::name() const noexcept {
  static constexpr std::string_view names[] = {"Constant",      "Zeros",         "Ones",
                                               "Uniform",       "Normal",        "KaimingUniform",
                                               "KaimingNormal", "XavierUniform", "XavierNormal"};
  return names[kind_.index()];
}

Initializer::Sampling Initializer::sampling(std::optional<std::int64_t> fan_in,
                                            std::optional<std::int64_t> fan_out) const {
  Sampling s;
  if (const auto* c = std::get_if<Constant>(&kind_)) {
    check_finite("Constant", "value", c->value);
    s.constant = c->value;
  } else if (std::holds_alternative<Zeros>(kind_)) {
    s.constant = 0.0;
  } else if (std::holds_alternative<Ones>(kind_)) {
    s.constant = 1.0;
  } else if (const auto* u = std::get_if<Uniform>(&kind_)) {
    check_finite("Uniform", "min", u->min);
    check_finite("Uniform", "max", u->max);
    if (u->min > u->max) {
      throw_error<ConfigError>("Initializer::Uniform: min must be <= max, got min = ", u->min,
                               ", max = ", u->max);
    }
    if (u->min == u->max) {
      s.constant = u->min;
    } else {
      s.distribution = Distribution::uniform(u->min, u->max);
    }
  } else if (const auto* n = std::get_if<Normal>(&kind_)) {
    check_finite("Normal", "mean", n->mean);
    check_finite("Normal", "std", n->std);
    if (n->std < 0) {
      throw_error<ConfigError>("Initializer::Normal: std must be >= 0, got ", n->std);
    }
    s.distribution = Distribution::normal(n->mean, n->std);
  } else if (const auto* ku = std::get_if<KaimingUniform>(&kind_)) {
    check_gain("KaimingUniform", ku->gain);
    const auto fan = ku->fan_out_only ? need_fan("KaimingUniform", "fan_out", fan_out)
                                      : need_fan("KaimingUniform", "fan_in", fan_in);
    // torch.nn.init.kaiming_uniform_: std = gain / sqrt(fan), bound = sqrt(3)·std.
    s = symmetric_uniform(ku->gain * std::sqrt(3.0 / static_cast<double>(fan)));
  } else if (const auto* kn = std::get_if<KaimingNormal>(&kind_)) {
    check_gain("KaimingNormal", kn->gain);
    const auto fan = kn->fan_out_only ? need_fan("KaimingNormal", "fan_out", fan_out)
                                      : need_fan("KaimingNormal", "fan_in", fan_in);
    s = centred_normal(kn->gain / std::sqrt(static_cast<double>(fan)));
  } else if (const auto* xu = std::get_if<XavierUniform>(&kind_)) {
    check_gain("XavierUniform", xu->gain);
    const auto sum =
        need_fan("XavierUniform", "fan_in", fan_in) + need_fan("XavierUniform", "fan_out", fan_out);
    s = symmetric_uniform(xu->gain * std::sqrt(6.0 / static_cast<double>(sum)));
  } else if (const auto* xn = std::get_if<XavierNormal>(&kind_)) {
    check_gain("XavierNormal", xn->gain);
    const auto sum =
        need_fan("XavierNormal", "fan_in", fan_in) + need_fan("XavierNormal", "fan_out", fan_out);
    s = centred_normal(xn->gain * std::sqrt(2.0 / static_cast<double>(sum)));
  }
  return s;
}

void append_to(std::string& kiln_text, const Initializer& init) {
  ::kiln::StrOut out(kiln_text);
  std::visit(
      [&](const auto& k) {
        using T = std::decay_t<decltype(k)>;
        out << init.name();
        if constexpr (std::is_same_v<T, Initializer::Constant>) {
          out << " { value: " << num(k.value) << " }";
        } else if constexpr (std::is_same_v<T, Initializer::Uniform>) {
          out << " { min: " << num(k.min) << ", max: " << num(k.max) << " }";
        } else if constexpr (std::is_same_v<T, Initializer::Normal>) {
          out << " { mean: " << num(k.mean) << ", std: " << num(k.std) << " }";
        } else if constexpr (std::is_same_v<T, Initializer::KaimingUniform> ||
                             std::is_same_v<T, Initializer::KaimingNormal>) {
          out << " { gain: " << num(k.gain)
              << ", fan_out_only: " << (k.fan_out_only ? "true" : "false") << " }";
        } else if constexpr (std::is_same_v<T, Initializer::XavierUniform> ||
                             std::is_same_v<T, Initializer::XavierNormal>) {
          out << " { gain: " << num(k.gain) << " }";
        }
      },
      init.kind());
}

}  // namespace kiln::nn

kiln::config::Value kiln::config::Codec<kiln::nn::Initializer>::encode(
    const kiln::nn::Initializer& init) {
  using I = kiln::nn::Initializer;
  const std::string name(init.name());
  Value j;
  std::visit(
      [&](const auto& k) {
        using T = std::decay_t<decltype(k)>;
        if constexpr (std::is_same_v<T, I::Zeros> || std::is_same_v<T, I::Ones>) {
          j = name;  // serde's form of a unit variant
        } else if constexpr (std::is_same_v<T, I::Constant>) {
          j = Value::object({{name, Value::object({{"value", k.value}})}});
        } else if constexpr (std::is_same_v<T, I::Uniform>) {
          j = Value::object({{name, Value::object({{"min", k.min}, {"max", k.max}})}});
        } else if constexpr (std::is_same_v<T, I::Normal>) {
          j = Value::object({{name, Value::object({{"mean", k.mean}, {"std", k.std}})}});
        } else if constexpr (std::is_same_v<T, I::KaimingUniform> ||
                             std::is_same_v<T, I::KaimingNormal>) {
          j = Value::object(
              {{name, Value::object({{"gain", k.gain}, {"fan_out_only", k.fan_out_only}})}});
        } else {
          j = Value::object({{name, Value::object({{"gain", k.gain}})}});
        }
      },
      init.kind());
  return j;
}

kiln::nn::Initializer kiln::config::Codec<kiln::nn::Initializer>::decode(const Value& j) {
  using I = kiln::nn::Initializer;
  using kiln::ConfigError;
  using kiln::str_cat;
  using namespace kiln::nn;  // the helpers of the anonymous namespace above
  if (j.is_string()) {
    const std::string& name = j.get_string();
    if (name == "Zeros") return I::Zeros{};
    if (name == "Ones") return I::Ones{};
    throw_error<ConfigError>("Initializer: unknown variant \"", name, "\" (variants: ", kVariants,
                             "; only Zeros and Ones are written as a plain string)");
  }
  if (!j.is_object() || j.size() != 1) {
    throw_error<ConfigError>(
        "Initializer: expected \"Zeros\", \"Ones\" or an object with one "
        "variant such as {\"KaimingUniform\": {\"gain\": 1, "
        "\"fan_out_only\": false}}, got ",
        j.dump());
  }
  const std::string name = j.keys()[0];
  const Value& body = j.items()[0];
  if (name == "Zeros" || name == "Ones") {
    if (!(body.is_null() || (body.is_object() && body.empty()))) {
      throw_error<ConfigError>("Initializer::", name, ": takes no fields, got ", body.dump());
    }
    return name == "Zeros" ? I(I::Zeros{}) : I(I::Ones{});
  }
  if (name == "Constant") {
    only_fields(body, name, {"value"});
    return I::Constant{number_field(body, name, "value")};
  }
  if (name == "Uniform") {
    only_fields(body, name, {"min", "max"});
    return I::Uniform{number_field(body, name, "min"), number_field(body, name, "max")};
  }
  if (name == "Normal") {
    only_fields(body, name, {"mean", "std"});
    return I::Normal{number_field(body, name, "mean"), number_field(body, name, "std")};
  }
  if (name == "KaimingUniform" || name == "KaimingNormal") {
    only_fields(body, name, {"gain", "fan_out_only"});
    const double gain = number_field(body, name, "gain");
    const bool fan_out_only = bool_field(body, name, "fan_out_only");
    if (name == "KaimingUniform") return I::KaimingUniform{gain, fan_out_only};
    return I::KaimingNormal{gain, fan_out_only};
  }
  if (name == "XavierUniform" || name == "XavierNormal") {
    only_fields(body, name, {"gain"});
    const double gain = number_field(body, name, "gain");
    if (name == "XavierUniform") return I::XavierUniform{gain};
    return I::XavierNormal{gain};
  }
  throw_error<ConfigError>("Initializer: unknown variant \"", name, "\" (variants: ", kVariants,
                           ")");
}
