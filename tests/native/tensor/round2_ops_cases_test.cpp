// The round-2 PyTorch reference cases of the Tensor-ops scope (tests/native/cases/round2.jsonl,
// next to the file KILN_CASES_FILE names) on Autodiff<Cpu>'s rank-erased ops, as the JS API
// runs them: prod with zeros and over an empty dim, matmul with empty and vector operands,
// log1p/expm1 near 0. PyTorch's [] of a whole-tensor reduction is Kiln's [1]; keepdim=False
// results are compared after removing the kept dim.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kiln/kiln.hpp"
#include "support/paths.hpp"

namespace kiln {
namespace {

using AD = Autodiff<Cpu>;
using O = AD::FloatOps;
using P = AD::FloatTensor;
using nlohmann::json;

json load(const std::string& id) {
  std::string path = KILN_CASES_FILE;
  path.replace(path.rfind("cases.jsonl"), std::string("cases.jsonl").size(), "round2.jsonl");
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    json c = json::parse(line);
    if (c.at("id") == id) return c;
  }
  throw std::runtime_error("no case " + id);
}

float value_of(const json& v) {
  if (v.is_string()) {
    const std::string s = v;
    return s == "nan" ? NAN : s == "inf" ? INFINITY : -INFINITY;
  }
  return v.get<float>();
}

std::vector<std::int64_t> shape_of(const json& t) { return t.at("shape").get<std::vector<std::int64_t>>(); }

P input(const json& c, const std::string& name, bool grad = true) {
  const json& t = c.at("inputs").at(name);
  std::vector<float> data;
  for (const auto& v : t.at("data")) data.push_back(value_of(v));
  P x = O::from_data(TensorData(Shape(shape_of(t)), std::move(data)), DType::F32, {});
  return grad ? O::set_require_grad(std::move(x), true) : x;
}

/// Compares t (a primitive of Cpu) with expected[name]; `shape` overrides the expected shape.
void check(const json& c, const std::string& name, const CpuTensor& t,
           std::optional<std::vector<std::int64_t>> shape = std::nullopt) {
  const json& e = c.at("expected").at(name);
  EXPECT_EQ(t.shape(), Shape(shape.value_or(shape_of(e)))) << name;
  const auto got = Cpu::FloatOps::into_data(t).to_vec<float>();
  const double abs = c.at("tolerance").at("abs"), rel = c.at("tolerance").at("rel");
  ASSERT_EQ(got.size(), e.at("data").size()) << name;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const float want = value_of(e.at("data")[i]);
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got[i])) << name << "[" << i << "]";
    } else if (std::isinf(want)) {
      EXPECT_EQ(got[i], want) << name << "[" << i << "]";
    } else {
      EXPECT_LE(std::abs(got[i] - want), abs + rel * std::abs(want)) << name << "[" << i << "]: " << got[i];
    }
  }
}

/// The gradients of sum(out · dy) (or out itself when dy is empty) for the leaves.
std::vector<CpuTensor> grads(const P& out, const std::string& dy, const json& c, const std::vector<P>& leaves) {
  const P loss = dy.empty() ? out : O::reduce(ReduceOp::Sum, O::binary(BinaryOp::Mul, out, input(c, dy, false)));
  auto g = O::backward(loss);
  std::vector<CpuTensor> out_grads;
  for (const P& x : leaves) out_grads.push_back(*O::grad(x, g));
  return out_grads;
}

/// torch.matmul with rank-1 operands as the JS API lowers it (bindings/js/tensor/
/// elementwise.ts): a [k] lhs as [1, k], a [k] rhs as [k, 1], the added dims removed.
P matmul(const P& a, const P& b) {
  const Shape sa = O::shape(a), sb = O::shape(b);
  if (sa.rank() >= 2 && sb.rank() >= 2) return O::matmul(a, b);
  P la = sa.rank() == 1 ? O::reshape(a, std::vector<std::int64_t>{1, sa[0]}) : a;
  P lb = sb.rank() == 1 ? O::reshape(b, std::vector<std::int64_t>{sb[0], 1}) : b;
  // Leading 1s for the lower-rank operand (bindings/tensor_reduce.cpp does the same).
  const auto lead = [](P t, std::size_t rank) {
    std::vector<std::int64_t> s = O::shape(t).to_vector();
    while (s.size() < rank) s.insert(s.begin(), 1);
    return O::reshape(std::move(t), s);
  };
  const std::size_t r = std::max(O::shape(la).rank(), O::shape(lb).rank());
  la = lead(std::move(la), r);
  lb = lead(std::move(lb), r);
  const P prod = O::matmul(la, lb);
  std::vector<std::int64_t> out = O::shape(prod).to_vector();
  if (sb.rank() == 1) out.pop_back();
  if (sa.rank() == 1) out.erase(out.end() - (sb.rank() == 1 ? 1 : 2));
  return O::reshape(prod, out);
}

P squeeze(const P& x, std::int64_t dim) {
  std::vector<std::int64_t> s = O::shape(x).to_vector();
  s.erase(s.begin() + dim);
  return O::reshape(x, s);
}

TEST(Round2OpsCases, ProdZerosGradAndEmpty) {
  const json c = load("prod_zeros_grad_and_empty");
  const P x = input(c, "x"), v = input(c, "v");
  const P p = squeeze(O::reduce_dim(ReduceOp::Prod, x, 1), 1);
  check(c, "prod_dim1", p.primitive);
  check(c, "grad_x__prod_dim1", grads(p, "dy_prod_dim1", c, {x})[0]);
  const P pv = O::reduce(ReduceOp::Prod, v);
  check(c, "prod_all_v", pv.primitive, std::vector<std::int64_t>{1});  // [1] for torch's []
  check(c, "grad_v__prod_all_v", grads(pv, "", c, {v})[0]);
  check(c, "prod_empty_dim1", squeeze(O::reduce_dim(ReduceOp::Prod, input(c, "e"), 1), 1).primitive);
}

TEST(Round2OpsCases, MatmulEmptyInnerAndOuterDims) {
  const json c = load("matmul_empty_inner_and_outer_dims");
  struct Pair {
    const char *out, *a, *b, *dy;
  };
  for (const Pair& q : {Pair{"mm_k0", "A", "B", "dy_mm_k0"}, Pair{"bmm_k0", "A3", "B3", "dy_bmm_k0"},
                        Pair{"dot_k0", "u", "w", ""}, Pair{"mm_m0", "P", "Q", "dy_mm_m0"}}) {
    const P a = input(c, q.a), b = input(c, q.b);
    const P out = matmul(a, b);
    check(c, q.out, out.primitive);
    const auto g = grads(out, q.dy, c, {a, b});
    check(c, std::string("grad_") + q.a + "__" + q.out, g[0]);
    check(c, std::string("grad_") + q.b + "__" + q.out, g[1]);
  }
}

TEST(Round2OpsCases, MatmulVectorOperandsGrad) {
  const json c = load("matmul_vector_operands_grad");
  struct Pair {
    const char *out, *a, *b, *dy;
  };
  for (const Pair& q : {Pair{"vm", "v", "M", "dy_vm"}, Pair{"mv", "N", "v", "dy_mv"}, Pair{"vv", "v", "w", ""},
                        Pair{"v_batched", "v", "T", "dy_v_batched"}, Pair{"batched_v", "T2", "v", "dy_batched_v"}}) {
    const P a = input(c, q.a), b = input(c, q.b);
    const P out = matmul(a, b);
    check(c, q.out, out.primitive);
    const auto g = grads(out, q.dy, c, {a, b});
    check(c, std::string("grad_") + q.a + "__" + q.out, g[0]);
    check(c, std::string("grad_") + q.b + "__" + q.out, g[1]);
  }
}

TEST(Round2OpsCases, Log1pExpm1NearZero) {
  const json c = load("log1p_expm1_near_zero");
  const P x = input(c, "x"), e = input(c, "e");
  const P l = O::unary(UnaryOp::Log1p, x), m = O::unary(UnaryOp::Expm1, e);
  check(c, "log1p", l.primitive);
  check(c, "expm1", m.primitive);
  check(c, "grad_x__log1p", grads(l, "dy_log1p", c, {x})[0]);
  check(c, "grad_e__expm1", grads(m, "dy_expm1", c, {e})[0]);
}

}  // namespace
}  // namespace kiln
