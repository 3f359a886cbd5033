// WGSL helper functions of the Wgpu kernels (see wgsl_math.hpp for why they exist).
//
// Each helper is one entry: the name the kernels call and its WGSL source. Constants are
// written as bit patterns (bitcast<f32>(0x...u), folded at compile time) so that no decimal
// rounding stands between the Cpu kernel's constant and ours; the xsimd ones carry xsimd's
// hex value and name. Polynomials are Horner forms in xsimd's order (c0 + x·(c1 + x·(...))),
// every step rounded in f32 as xsimd's SSE4.1 code (lowered to SIMD128, no FMA) rounds it.
#include "wgpu/wgsl_math.hpp"

#include <algorithm>
#include <vector>

namespace kiln::wgpu {
namespace {

struct Helper {
  std::string_view name;
  std::string_view source;
};

// clang-format off
constexpr Helper kHelpers[] = {
// ---- opaque constants ----
// SwiftShader optimises SPIR-V with spirv-opt, whose folding rules reassociate float
// arithmetic that has constant operands: (x + 1) - 1 becomes x, ((x - c1) - c2) - c3 becomes
// x - (c1 + c2 + c3), x / 6 becomes x · (1/6); another rule factors a·b + a·c into
// a·(b + c). Those rewrites break compensated arithmetic and round differently from the
// Cpu, so every float constant of an arithmetic expression goes through kf (bits) or kc (a
// literal) and reaches the arithmetic as an unknown value: its bits xor g_zero, a 0 the
// compiler cannot see; kc(v) of a variable hides a common factor the same way. The kernel
// sets g_zero = gid.z (0: dispatches are 2-D) before anything else.
{"g_zero", R"(var<private> g_zero: u32;
)"},
{"kf", R"(fn kf(b: u32) -> f32 { return bitcast<f32>(b ^ g_zero); }
)"},
{"kc", R"(fn kc(v: f32) -> f32 { return bitcast<f32>(bitcast<u32>(v) ^ g_zero); }
)"},
// ---- bits: exact for every input, subnormals included ----
{"f_abs", R"(fn f_abs(x: f32) -> f32 { return bitcast<f32>(bitcast<u32>(x) & 0x7fffffffu); }
)"},
{"f_neg", R"(fn f_neg(x: f32) -> f32 { return bitcast<f32>(bitcast<u32>(x) ^ 0x80000000u); }
)"},
{"f_copysign", R"(fn f_copysign(x: f32, s: f32) -> f32 {
  return bitcast<f32>((bitcast<u32>(x) & 0x7fffffffu) | (bitcast<u32>(s) & 0x80000000u));
}
)"},
{"f_is_sub", R"(fn f_is_sub(x: f32) -> bool {
  let m = bitcast<u32>(x) & 0x7fffffffu;
  return m != 0u && m < 0x00800000u;
}
)"},
// A key ordered as the values, -0 = +0 (not for nan).
{"f_key", R"(fn f_key(x: f32) -> i32 {
  let b = bitcast<u32>(x);
  let m = i32(b & 0x7fffffffu);
  return select(m, -m, b >= 0x80000000u);
}
)"},
// IEEE comparisons (false when either is nan).
{"f_lt", R"(fn f_lt(a: f32, b: f32) -> bool { return !is_nan_f32(a) && !is_nan_f32(b) && f_key(a) < f_key(b); }
)"},
{"f_le", R"(fn f_le(a: f32, b: f32) -> bool { return !is_nan_f32(a) && !is_nan_f32(b) && f_key(a) <= f_key(b); }
)"},
{"f_eq", R"(fn f_eq(a: f32, b: f32) -> bool { return !is_nan_f32(a) && !is_nan_f32(b) && f_key(a) == f_key(b); }
)"},
// -1, 0 or 1; nan stays nan (ops.def's Sign).
{"f_sign", R"(fn f_sign(x: f32) -> f32 {
  if (is_nan_f32(x)) { return x; }
  if (f_lt(0.0, x)) { return 1.0; }
  if (f_lt(x, 0.0)) { return -1.0; }
  return 0.0;
}
)"},
// torch.maximum / minimum: nan if either is nan, else a > b ? a : b (a < b ? a : b).
{"f_max", R"(fn f_max(a: f32, b: f32) -> f32 {
  if (is_nan_f32(a) || is_nan_f32(b)) { return nan_f32(); }
  return select(b, a, f_lt(b, a));
}
)"},
{"f_min", R"(fn f_min(a: f32, b: f32) -> f32 {
  if (is_nan_f32(a) || is_nan_f32(b)) { return nan_f32(); }
  return select(b, a, f_lt(a, b));
}
)"},
// x = m · 2^e, m in [1, 2) with x's sign, for finite non-zero x (subnormals from the bits);
// m = x, e = 0 for ±0, ±inf and nan.
{"FExp", R"(struct FExp { m: f32, e: i32 }
)"},
{"f_frexp", R"(fn f_frexp(x: f32) -> FExp {
  let b = bitcast<u32>(x);
  let ex = (b >> 23u) & 0xffu;
  let mant = b & 0x7fffffu;
  if (ex == 0xffu || (ex == 0u && mant == 0u)) { return FExp(x, 0); }
  if (ex == 0u) {
    let lz = countLeadingZeros(mant);
    return FExp(bitcast<f32>((b & 0x80000000u) | 0x3f800000u | ((mant << (lz - 8u)) & 0x7fffffu)),
                -118 - i32(lz));
  }
  return FExp(bitcast<f32>((b & 0x807fffffu) | 0x3f800000u), i32(ex) - 127);
}
)"},
// 2^e for e in [-126, 127].
{"f_pow2", R"(fn f_pow2(e: i32) -> f32 { return bitcast<f32>(u32(e + 127) << 23u); }
)"},
// x · 2^e in at most three exact steps (one rounding, unless the result is subnormal).
{"f_ldexp", R"(fn f_ldexp(x: f32, e: i32) -> f32 {
  var r = x;
  var k = clamp(e, -300, 300);
  for (var i = 0; i < 2; i++) {
    if (k > 127) { r = r * f_pow2(127); k = k - 127; }
    if (k < -126) { r = r * f_pow2(-126); k = k + 126; }
  }
  return r * f_pow2(k);
}
)"},
// a · b and a / b, correctly rounded also for subnormal operands.
{"f_mul", R"(fn f_mul(a: f32, b: f32) -> f32 {
  if (!f_is_sub(a) && !f_is_sub(b)) { return a * b; }
  let x = f_frexp(a);
  let y = f_frexp(b);
  return f_ldexp(x.m * y.m, x.e + y.e);
}
)"},
{"f_div", R"(fn f_div(a: f32, b: f32) -> f32 {
  if (!f_is_sub(a) && !f_is_sub(b)) { return a / b; }
  let x = f_frexp(a);
  let y = f_frexp(b);
  return f_ldexp(x.m / y.m, x.e - y.e);
}
)"},
{"f_sqrt", R"(fn f_sqrt(x: f32) -> f32 {
  if (!f_is_sub(x)) { return sqrt(x); }
  if (bitcast<u32>(x) >= 0x80000000u) { return nan_f32(); }
  let y = f_frexp(x);
  let odd = (y.e & 1) != 0;
  return f_ldexp(sqrt(select(y.m, kc(2.0) * y.m, odd)), (y.e - select(0, 1, odd)) / 2);
}
)"},
// Rounding keeps the sign of x, also for a zero result (ceil(-0.5) = -0), as ops.def's rows.
{"f_ceil", R"(fn f_ceil(x: f32) -> f32 {
  if (f_is_sub(x)) { return select(kf(0x80000000u), 1.0, bitcast<u32>(x) < 0x80000000u); }
  return f_copysign(ceil(x), x);
}
)"},
{"f_floor", R"(fn f_floor(x: f32) -> f32 {
  if (f_is_sub(x)) { return select(-1.0, 0.0, bitcast<u32>(x) < 0x80000000u); }
  return f_copysign(floor(x), x);
}
)"},
{"f_round", R"(fn f_round(x: f32) -> f32 { return f_copysign(round(x), x); }
)"},
// fmod, exact (musl's fmodf on the bits).
{"f_fmod", R"(fn f_fmod(x: f32, y: f32) -> f32 {
  var ux = bitcast<u32>(x);
  var uy = bitcast<u32>(y);
  var ex = i32((ux >> 23u) & 0xffu);
  var ey = i32((uy >> 23u) & 0xffu);
  let sx = ux & 0x80000000u;
  let ax = ux & 0x7fffffffu;
  let ay = uy & 0x7fffffffu;
  if (ay == 0u || ay > 0x7f800000u || ex == 0xff) { return nan_f32(); }
  if (ax <= ay) {
    if (ax == ay) { return bitcast<f32>(sx); }
    return x;
  }
  if (ex == 0) {
    let s = countLeadingZeros(ax) - 8u;
    ux = ax << s;
    ex = 1 - i32(s);
  } else {
    ux = (ux & 0x7fffffu) | 0x800000u;
  }
  if (ey == 0) {
    let s = countLeadingZeros(ay) - 8u;
    uy = ay << s;
    ey = 1 - i32(s);
  } else {
    uy = (uy & 0x7fffffu) | 0x800000u;
  }
  for (; ex > ey; ex = ex - 1) {
    let i = ux - uy;
    if ((i >> 31u) == 0u) {
      if (i == 0u) { return bitcast<f32>(sx); }
      ux = i;
    }
    ux = ux << 1u;
  }
  let i = ux - uy;
  if ((i >> 31u) == 0u) {
    if (i == 0u) { return bitcast<f32>(sx); }
    ux = i;
  }
  for (; (ux >> 23u) == 0u; ex = ex - 1) { ux = ux << 1u; }
  if (ex > 0) {
    ux = (ux - 0x800000u) | (u32(ex) << 23u);
  } else {
    ux = ux >> u32(1 - ex);
  }
  return bitcast<f32>(ux | sx);
}
)"},
// torch.remainder: fmod, moved to the divisor's sign (cpu/kernels/binary.hpp).
{"f_rem", R"(fn f_rem(a: f32, b: f32) -> f32 {
  var m = f_fmod(a, b);
  if ((bitcast<u32>(m) & 0x7fffffffu) != 0u && f_lt(b, 0.0) != f_lt(m, 0.0)) { m = m + b; }
  return m;
}
)"},

// ---- double-f32 arithmetic (error-free transforms; SwiftShader rounds each step, no FMA) ----
// Veltkamp's split: x = hi + lo with 12-bit halves (|x| < 2^115).
{"f_split", R"(fn f_split(x: f32) -> vec2<f32> {
  let c = kc(4097.0) * x;
  let hi = c - (c - x);
  return vec2<f32>(hi, x - hi);
}
)"},
// a · b = p.x + p.y exactly (Dekker).
{"f_two_prod", R"(fn f_two_prod(a: f32, b: f32) -> vec2<f32> {
  let p = a * b;
  let x = f_split(a);
  let y = f_split(b);
  return vec2<f32>(p, (((x.x * y.x - p) + x.x * y.y) + x.y * y.x) + x.y * y.y);
}
)"},
// a + b = s.x + s.y exactly (Knuth).
{"f_two_sum", R"(fn f_two_sum(a: f32, b: f32) -> vec2<f32> {
  let s = a + b;
  let bb = s - a;
  return vec2<f32>(s, (a - (s - bb)) + (b - bb));
}
)"},
// log2(x) as hi + lo for finite x > 0 (subnormals included), |error| < 2^-40 · |log2 x| + 2^-44:
// x = m·2^e with m in [√½, √2], ln m = 2·atanh(s), s = (m - 1)/(m + 1) in double-f32 up to
// the s³ term, the rest (< 6e-5) in f32.
{"f_log2_df", R"(fn f_log2_df(x: f32) -> vec2<f32> {
  let fe = f_frexp(x);
  var m = fe.m;
  var e = fe.e;
  if (m > kf(0x3fb504f3u)) { m = m * kc(0.5); e = e + 1; }
  let f = m - kc(1.0);
  let d = kc(2.0) + f;
  let dl = f - (d - kc(2.0));
  let s = f / d;
  let p = f_two_prod(s, d);
  let sl = (((f - p.x) - p.y) - s * dl) / d;
  let z = f_two_prod(s, s);
  var c = f_two_prod(s, z.x);
  c.y = c.y + s * z.y;
  let c23 = vec2<f32>(kf(0x3f2aaaabu), kf(0xb2aaaaabu));  // 2/3
  var t = f_two_prod(c.x, c23.x);
  t.y = t.y + (c.x * c23.y + c.y * c23.x);
  let zz = z.x;
  let q = kf(0x3ecccccdu) + zz * (kf(0x3e924925u) + zz * (kf(0x3e638e39u)
        + zz * (kf(0x3e3a2e8cu) + zz * (kf(0x3e1d89d9u) + zz * (kf(0x3e088889u)
        + zz * kf(0x3df0f0f1u))))));  // 2/5, 2/7, ..., 2/17
  let small = (s * (zz * zz)) * q;
  var h = f_two_sum(kc(2.0) * s, t.x);
  h.y = h.y + (((kc(2.0) * sl) + t.y) + (((kc(2.0) * zz) * sl) + small));
  let log2e = vec2<f32>(kf(0x3fb8aa3bu), kf(0x32a57060u));
  var l = f_two_prod(h.x, log2e.x);
  l.y = l.y + (h.x * log2e.y + h.y * log2e.x);
  var g = f_two_sum(f32(e), l.x);
  g.y = g.y + l.y;
  return g;
}
)"},
// powf (C99 Annex F's special cases; about 1 ulp from the correctly rounded result):
// 2^(y·log2|x|) with the product in double-f32, then 2^n · 2^f, |f| <= 1/2, by a degree-8
// polynomial.
{"f_pow", R"(fn f_pow(x: f32, y: f32) -> f32 {
  let bx = bitcast<u32>(x);
  let by = bitcast<u32>(y);
  let ax = bx & 0x7fffffffu;
  let ay = by & 0x7fffffffu;
  if (ay == 0u || bx == 0x3f800000u) { return 1.0; }
  if (ax > 0x7f800000u || ay > 0x7f800000u) { return nan_f32(); }
  let yneg = by >= 0x80000000u;
  if (ay == 0x7f800000u) {
    if (ax == 0x3f800000u) { return 1.0; }
    return select(0.0, inf_f32(), (ax > 0x3f800000u) != yneg);
  }
  // y: 0 not an integer, 1 odd, 2 even
  let ye = i32(ay >> 23u) - 127;
  var yclass = 2u;
  if (ye < 0) {
    yclass = 0u;
  } else if (ye < 24) {
    let sig = (ay & 0x7fffffu) | 0x800000u;
    if ((sig & (0x7fffffu >> u32(ye))) != 0u) {
      yclass = 0u;
    } else if (((sig >> u32(23 - ye)) & 1u) != 0u) {
      yclass = 1u;
    }
  }
  let xneg = bx >= 0x80000000u;
  let sgn = select(0u, 0x80000000u, xneg && yclass == 1u);
  if (ax == 0u) { return bitcast<f32>(select(0u, 0x7f800000u, yneg) | sgn); }
  if (ax == 0x7f800000u) { return bitcast<f32>(select(0x7f800000u, 0u, yneg) | sgn); }
  if (xneg && yclass == 0u) { return nan_f32(); }
  if (ax == 0x3f800000u) { return bitcast<f32>(0x3f800000u | sgn); }   // (-1)^y, y an integer
  let g = f_log2_df(bitcast<f32>(ax));
  let t0 = y * g.x;
  if (t0 > 200.0) { return bitcast<f32>(0x7f800000u | sgn); }
  if (t0 < -200.0) { return bitcast<f32>(sgn); }
  let t = f_two_prod(y, g.x);
  let n = round(t.x);
  let fr = (t.x - n) + (t.y + y * g.y);
  let p = kf(0x3f317218u) + fr * (kf(0x3e75fdf0u) + fr * (kf(0x3d635847u)
        + fr * (kf(0x3c1d955bu) + fr * (kf(0x3aaec3ffu) + fr * (kf(0x39218489u)
        + fr * (kf(0x377fe5feu) + fr * kf(0x35b16011u)))))));  // ln2^k / k!
  let r = f_ldexp(kc(1.0) + fr * p, i32(n));
  return bitcast<f32>(bitcast<u32>(r) | sgn);
}
)"},

// ---- xsimd 8.1's f32 algorithms (xsimd/arch/generic/xsimd_generic_{math,trigo}.hpp) ----
// exp: k = nearbyint(x/ln2), r = x - k·ln2 (Cody-Waite), 1 + r + r²·P(r), scaled by 2^k
// through the exponent bits (k + 127 << 23, 0 below minlog and inf above maxlog, as xsimd).
{"f_exp", R"(fn f_exp(a: f32) -> f32 {
  let k = round(kf(0x3fb8aa3bu) * a);          // invlog_2
  var x = a - k * kf(0x3f318000u);             // log_2hi
  x = x - k * kf(0xb95e8083u);                 // log_2lo
  let y = kf(0x3f000000u) + x * (kf(0x3e2aa9a5u) + x * (kf(0x3d2aa957u)
        + x * (kf(0x3c098d8bu) + x * kf(0x3ab778cfu))));
  let r = (y * (x * x) + x) + kc(1.0);
  var res = r * bitcast<f32>((i32(k) + 127) << 23u);
  if (a <= -kf(0x42b0c0a5u)) { res = 0.0; }         // minlog
  if (a >= kf(0x42b0c0a5u)) { res = inf_f32(); }    // maxlog
  return res;
}
)"},
{"f_expm1", R"(fn f_expm1(a: f32) -> f32 {
  let k = round(kf(0x3fb8aa3bu) * a);
  var x = a - k * kf(0x3f318000u);
  x = x - k * kf(0xb95e8083u);
  let hx = x * kc(0.5);
  let hxs = x * hx;
  let r = kc(1.0) + hxs * (kf(0xbd08887fu) + hxs * kf(0x3acf6db4u));
  let t = kc(3.0) - r * hx;
  var e = hxs * ((r - t) / (kc(6.0) - x * t));
  e = x * e - hxs;
  let ik = i32(k);
  let two2mk = bitcast<f32>((127 - ik) << 23u);
  let y = (kc(1.0) - two2mk) - (e - x);
  var res = y * bitcast<f32>((ik + 127) << 23u);
  if (a > kf(0x42b0c0a5u)) { res = inf_f32(); }    // maxlog
  if (a < kf(0xc17f1402u)) { res = -1.0; }         // logeps
  return res;
}
)"},
// log: x = 2^k·(1 + f), f in [√½ - 1, √2 - 1), s = f/(2 + f), fdlibm's polynomial. xsimd
// scales a positive subnormal by 2^23: done here from the bits.
{"f_log", R"(fn f_log(a: f32) -> f32 {
  let b = bitcast<u32>(a);
  let mag = b & 0x7fffffffu;
  var x = a;
  var k = 0;
  if (mag != 0u && mag < 0x00800000u && b < 0x80000000u) {
    x = f32(mag) * kf(0x00800000u);            // a · 2^23 = mag · 2^-126
    k = -23;
  }
  var ix = bitcast<i32>(x) + (0x3f800000 - 0x3f3504f3);
  k = k + (ix >> 23u) - 0x7f;
  ix = (ix & 0x007fffff) + 0x3f3504f3;
  let f = bitcast<f32>(ix) - kc(1.0);
  let s = f / (kc(2.0) + f);
  let z = s * s;
  let w = z * z;
  let t1 = w * (kf(0x3eccce13u) + w * kf(0x3e789e26u));
  let t2 = z * (kf(0x3f2aaaaau) + w * kf(0x3e91e9eeu));
  let big_r = t2 + t1;
  let hfsq = kc(0.5) * f * f;
  let dk = f32(k);
  let r = dk * kf(0x3f318000u) + (((s * (hfsq + big_r) + dk * kf(0xb95e8083u)) - hfsq) + f);
  var res = r;
  if (b == 0x7f800000u) { res = inf_f32(); }
  if (mag == 0u) { res = -inf_f32(); }
  if (is_nan_f32(a) || (b >= 0x80000000u && mag != 0u)) { res = nan_f32(); }
  return res;
}
)"},
{"f_log1p", R"(fn f_log1p(a: f32) -> f32 {
  let uf = a + kc(1.0);
  var iu = bitcast<i32>(uf) + (0x3f800000 - 0x3f3504f3);
  let k = (iu >> 23u) - 0x7f;
  iu = (iu & 0x007fffff) + 0x3f3504f3;
  let f = bitcast<f32>(iu) - kc(1.0);
  let s = f / (kc(2.0) + f);
  let z = s * s;
  let w = z * z;
  let t1 = w * (kf(0x3eccce13u) + w * kf(0x3e789e26u));
  let t2 = z * (kf(0x3f2aaaaau) + w * kf(0x3e91e9eeu));
  let big_r = t2 + t1;
  let hfsq = kc(0.5) * f * f;
  let dk = f32(k);
  let c = select(a - (uf - kc(1.0)), kc(1.0) - (uf - a), k >= 2) / uf;   // log(1 + a) - log(uf)
  let r = dk * kf(0x3f318000u) + (((s * (hfsq + big_r) + (dk * kf(0xb95e8083u) + c)) - hfsq) + f);
  var res = r;
  if (bitcast<u32>(a) == 0x7f800000u) { res = inf_f32(); }
  if ((bitcast<u32>(uf) & 0x7fffffffu) == 0u) { res = -inf_f32(); }
  if (is_nan_f32(uf) || bitcast<u32>(uf) > 0x80000000u) { res = nan_f32(); }
  return res;
}
)"},
// tanh: odd polynomial below 5/8, else 1 - 2/(1 + e^2|x|); sign from the bits.
{"f_tanh", R"(fn f_tanh(a: f32) -> f32 {
  let x = f_abs(a);
  let sq = x * x;
  let p = kf(0xbeaaaa99u) + sq * (kf(0x3e088393u) + sq * (kf(0xbd5c1e2du)
        + sq * (kf(0x3ca9134eu) + sq * kf(0xbbbaf0eau))));
  let small = (p * sq) * x + x;
  let big = kc(-2.0) * (kc(1.0) / (kc(1.0) + f_exp(x + x))) + kc(1.0);
  let v = select(big, small, x < 0.625);
  return bitcast<f32>(bitcast<u32>(v) ^ (bitcast<u32>(a) & 0x80000000u));
}
)"},
// The Cpu's sigmoid (cpu/kernels/unary.hpp): e = exp(-|x|), (x >= 0 ? 1 : e) / (1 + e).
{"f_sigmoid", R"(fn f_sigmoid(x: f32) -> f32 {
  let e = f_exp(f_neg(f_abs(x)));
  return select(e, kc(1.0), f_le(0.0, x)) / (kc(1.0) + e);
}
)"},
// erf: x·P(x²) below 2/3, else 1 - e^(-x²)·Q(x/(1+x) - 0.4); erfc likewise (Boost.SIMD).
{"f_erf", R"(fn f_erf(a: f32) -> f32 {
  let x = f_abs(a);
  let xx = x * x;
  let r1 = a * (kf(0x3f906ebau) + xx * (kf(0xbec0937eu) + xx * (kf(0x3de70f22u)
         + xx * (kf(0xbcdb61f4u) + xx * (kf(0x3ba4468du) + xx * kf(0xba1fc83bu))))));
  let z = x / (kc(1.0) + x) - kf(0x3ecccccdu);
  let r2 = kc(1.0) - f_exp(-x * x) * f_erfc2(z);
  var res = select(select(r2, f_neg(r2), f_lt(a, 0.0)), r1, x < kf(0x3f2aaaabu));
  if (is_inf_f32(a)) { res = f_sign(a); }
  return res;
}
)"},
// erfc(x)·exp(x²) for x >= 2/3, of z = x/(1 + x) - 0.4.
{"f_erfc2", R"(fn f_erfc2(z: f32) -> f32 {
  return kf(0x3f0a0e8bu) + z * (kf(0xbf918a62u) + z * (kf(0x3e243828u)
       + z * (kf(0x3ec4ca6eu) + z * (kf(0x3e1175c7u) + z * (kf(0x3e2006f0u)
       + z * (kf(0xbfaea865u) + z * (kf(0x4050b063u) + z * (kf(0xc0cd1a85u)
       + z * (kf(0x40d67e3bu) + z * kf(0xc0283611u))))))))));
}
)"},
{"f_erfc", R"(fn f_erfc(a: f32) -> f32 {
  let x = f_abs(a);
  let z = x / (kc(1.0) + x);
  let r1 = (kc(1.0) - z) * (kf(0x3f7ffffeu) + z * (kf(0xbe036d7eu) + z * (kf(0xbfa11698u)
         + z * (kf(0xbffc9284u) + z * (kf(0xc016c985u) + z * (kf(0x3f2cff3bu)
         + z * (kf(0xc010d956u) + z * (kf(0x401b5680u) + z * kf(0x41aa8e55u)))))))));
  let r2 = f_exp(-x * x) * f_erfc2(z - kf(0x3ecccccdu));
  var r = select(r2, r1, x < kf(0x3f2aaaabu));
  if (bitcast<u32>(x) == 0x7f800000u) { r = 0.0; }
  return select(r, kc(2.0) - r, f_lt(a, 0.0));
}
)"},
// sin / cos: x = n·π/2 + r, |r| <= π/4, then a sine or cosine polynomial of r by n mod 4.
// The reduction is xsimd's trigo_reducer per element: Cody-Waite in three parts up to 20π,
// with tails up to 64π (mediumpi), above it exact (Payne–Hanek, f_rem_pio2_large; xsimd
// uses fdlibm's __ieee754_rem_pio2 in double). xsimd picks one branch per SIMD batch of 4;
// the branches agree to about an ulp on arguments they share.
{"Trig", R"(struct Trig { r: f32, n: u32 }
)"},
{"f_trig_reduce", R"(fn f_trig_reduce(x: f32) -> Trig {
  if (x <= kf(0x3f490fdbu)) { return Trig(x, 0u); }                       // pio4
  if (x <= kf(0x3fc90fdbu)) {                                              // pio2
    return Trig(((x - kf(0x3fc90f80u)) - kf(0x37354400u)) - kf(0x2e85a300u), 1u);
  }
  if (x <= kf(0x427b53d1u)) {                                              // twentypi
    let xi = round(x * kf(0x3f22f983u));                                   // twoopi
    var r = x - xi * kf(0x3fc90f80u);                                      // pio2_1
    r = r - xi * kf(0x37354400u);                                          // pio2_2
    r = r - xi * kf(0x2e85a300u);                                          // pio2_3
    return Trig(r, u32(i32(xi)) & 3u);
  }
  if (x <= kf(0x43490fdbu)) {                                              // mediumpi
    let fnn = round(x * kf(0x3f22f983u));
    var r = x - fnn * kf(0x3fc90f80u);
    var t = r;
    var w = fnn * kf(0x37354400u);                                         // pio2_2
    r = t - w;
    w = fnn * kf(0x2e85a308u) - ((t - r) - w);                             // pio2_2t
    t = r;
    w = fnn * kf(0x2e85a300u);                                             // pio2_3
    r = t - w;
    w = fnn * kf(0x248d3132u) - ((t - r) - w);                             // pio2_3t
    return Trig(r - w, u32(i32(fnn)) & 3u);
  }
  if (is_finite_f32(x)) { return f_rem_pio2_large(x); }
  return Trig(nan_f32(), 0u);
}
)"},
// The 64-bit product of two u32 as (lo, hi).
{"u_mul_wide", R"(fn u_mul_wide(a: u32, b: u32) -> vec2<u32> {
  let a0 = a & 0xffffu;
  let a1 = a >> 16u;
  let b0 = b & 0xffffu;
  let b1 = b >> 16u;
  let p00 = a0 * b0;
  let p01 = a0 * b1;
  let p10 = a1 * b0;
  let mid = (p00 >> 16u) + (p01 & 0xffffu) + (p10 & 0xffffu);
  return vec2<u32>((mid << 16u) | (p00 & 0xffffu), a1 * b1 + (p01 >> 16u) + (p10 >> 16u) + (mid >> 16u));
}
)"},
// Bits [pos, pos + 32) of the 192-bit little-endian number q.
{"u_bits32", R"(fn u_bits32(q: array<u32, 6>, pos: u32) -> u32 {
  var v = q;
  let i = pos / 32u;
  let sh = pos % 32u;
  if (sh == 0u) { return v[i]; }
  return (v[i] >> sh) | (v[i + 1u] << (32u - sh));
}
)"},
// Payne–Hanek for finite x > 64π: x = m·2^e, m the 24-bit significand; x·2/π mod 4 from m
// times a 128-bit window of 2/π's bits (the bits before it add multiples of 4), kept with
// >= 62 fraction bits; n = the nearest integer mod 4, r = (x·2/π - n)·π/2 correctly rounded
// (checked against exact reduction on 20,000 random arguments).
{"f_rem_pio2_large", R"(fn f_rem_pio2_large(x: f32) -> Trig {
  var w = array<u32, 7>(0xa2f9836eu, 0x4e441529u, 0xfc2757d1u, 0xf534ddc0u, 0xdb629599u, 0x3c439041u, 0xfe5163abu);
  let b = bitcast<u32>(x);
  let m = (b & 0x7fffffu) | 0x800000u;
  let e = i32((b >> 23u) & 0xffu) - 150;
  let j0 = select(0, (e - 2) / 32, e >= 2);
  var q = array<u32, 6>(0u, 0u, 0u, 0u, 0u, 0u);
  var carry = 0u;
  for (var k = 0; k < 4; k++) {
    let p = u_mul_wide(m, w[j0 + 3 - k]);
    let s = p.x + carry;
    q[k] = s;
    carry = p.y + select(0u, 1u, s < p.x);
  }
  q[4] = carry;
  let fb = u32(128 + 32 * j0 - e);
  let ip = u_bits32(q, fb) & 3u;
  var hi = u_bits32(q, fb - 32u);
  var lo = u_bits32(q, fb - 64u);
  var n = ip;
  let neg = hi >= 0x80000000u;
  if (neg) {                       // round up: the fraction becomes F - 1, negated
    n = (ip + 1u) & 3u;
    lo = 0u - lo;
    hi = ~hi + select(0u, 1u, lo == 0u);
  }
  var sc = 0u;
  if (hi == 0u) { hi = lo; lo = 0u; sc = 32u; }
  if (hi == 0u) { return Trig(0.0, n); }
  let c = countLeadingZeros(hi);
  if (c > 0u) {
    hi = (hi << c) | (lo >> (32u - c));
    lo = lo << c;
  }
  sc = sc + c;
  let a = f32(hi >> 8u) * kf(0x33800000u);                                     // 2^-24
  let a_lo = f32(((hi & 0xffu) << 16u) | (lo >> 16u)) * kf(0x27800000u);       // 2^-48
  let p = f_two_prod(a, kf(0x3fc90fdbu));                                      // π/2 hi
  let pl = p.y + (a * kf(0xb33bbd2eu) + a_lo * kf(0x3fc90fdbu));     // π/2 lo
  let r = (p.x + pl) * f_pow2(-i32(sc));
  return Trig(select(r, f_neg(r), neg), n);
}
)"},
{"f_sin_eval", R"(fn f_sin_eval(z: f32, x: f32) -> f32 {
  let y = kf(0xbe2aaaa2u) + z * (kf(0x3c08839du) + z * kf(0xb94ca1f9u));
  return (y * z) * x + x;
}
)"},
{"f_cos_eval", R"(fn f_cos_eval(z: f32) -> f32 {
  let y = kf(0x3d2aaaa5u) + z * (kf(0xbab60619u) + z * kf(0x37ccf5ceu));
  return kc(1.0) + (z * kc(-0.5) + (y * z) * kc(z));   // kc(z): no factoring (see kc)
}
)"},
{"f_sin", R"(fn f_sin(a: f32) -> f32 {
  let t = f_trig_reduce(f_abs(a));
  let z = t.r * t.r;
  let v = select(f_cos_eval(z), f_sin_eval(z, t.r), (t.n & 1u) == 0u);
  let sgn = (bitcast<u32>(a) & 0x80000000u) ^ select(0u, 0x80000000u, t.n >= 2u);
  return bitcast<f32>(bitcast<u32>(v) ^ sgn);
}
)"},
{"f_cos", R"(fn f_cos(a: f32) -> f32 {
  let t = f_trig_reduce(f_abs(a));
  let z = t.r * t.r;
  let swap = (t.n & 1u) != 0u;
  let v = select(f_cos_eval(z), f_sin_eval(z, t.r), swap);
  return bitcast<f32>(bitcast<u32>(v) ^ select(0u, 0x80000000u, swap != (t.n >= 2u)));
}
)"},

// ---- i32, as cpu/kernels/binary.hpp (wrapping; a zero divisor gives 0, never a trap) ----
{"i_neg", R"(fn i_neg(x: i32) -> i32 { return bitcast<i32>(0u - bitcast<u32>(x)); }
)"},
{"i_div_trunc", R"(fn i_div_trunc(a: i32, b: i32) -> i32 {
  if (b == 0) { return 0; }
  if (b == -1) { return i_neg(a); }
  return a / b;
}
)"},
{"i_div_floor", R"(fn i_div_floor(a: i32, b: i32) -> i32 {
  if (b == 0) { return 0; }
  if (b == -1) { return i_neg(a); }
  let q = a / b;
  return select(q, q - 1, (a % b) != 0 && ((a < 0) != (b < 0)));
}
)"},
{"i_rem", R"(fn i_rem(a: i32, b: i32) -> i32 {
  if (b == 0 || b == -1) { return 0; }
  let r = a % b;
  return select(r, r + b, r != 0 && ((r < 0) != (b < 0)));
}
)"},
{"i_fmod", R"(fn i_fmod(a: i32, b: i32) -> i32 {
  if (b == 0 || b == -1) { return 0; }
  return a % b;
}
)"},
// Exact, wrapping; 0 for a negative exponent (the ops reject those when they can see them).
{"i_pow", R"(fn i_pow(a: i32, b: i32) -> i32 {
  if (b < 0) { return 0; }
  var result = 1u;
  var base = bitcast<u32>(a);
  var e = bitcast<u32>(b);
  while (e != 0u) {
    if ((e & 1u) != 0u) { result = result * base; }
    base = base * base;
    e = e >> 1u;
  }
  return bitcast<i32>(result);
}
)"},
};
// clang-format on

bool is_ident_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// Whether `code` contains the identifier `name` (not as part of a longer one).
bool uses(std::string_view code, std::string_view name) {
  for (std::size_t at = code.find(name); at != std::string_view::npos;
       at = code.find(name, at + 1)) {
    const std::size_t end = at + name.size();
    if ((at == 0 || !is_ident_char(code[at - 1])) &&
        (end == code.size() || !is_ident_char(code[end]))) {
      return true;
    }
  }
  return false;
}

}  // namespace

std::string wgsl_helpers(std::string_view code) {
  constexpr std::size_t n = std::size(kHelpers);
  std::vector<bool> needed(n, false);
  std::vector<std::string_view> pending{code};
  while (!pending.empty()) {
    const std::string_view text = pending.back();
    pending.pop_back();
    for (std::size_t i = 0; i < n; ++i) {
      if (!needed[i] && uses(text, kHelpers[i].name)) {
        needed[i] = true;
        pending.push_back(kHelpers[i].source);
      }
    }
  }
  std::string out;
  for (std::size_t i = 0; i < n; ++i) {
    if (needed[i]) out += kHelpers[i].source;
  }
  return out;
}

}  // namespace kiln::wgpu
