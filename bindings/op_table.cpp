// The op table for the JS layer: `opTable()` returns the rows of
// engine/include/kiln/backend/ops.def with the engine's own enum values, so the package's JS
// Tensor (bindings/js/tensor/ops.ts) never copies a C++ enum ordinal by hand. Read once per
// module instance at init.
//
//   opTable() -> {binary: Row[], unary: Row[], compare: Row[], reduce: Row[]}
//   Row = {id: number (the enumerator's value: BinaryOp / UnaryOp / CompareOp / ReduceOp),
//          name: string (the C++ snake_case name, as in error messages),
//          method: string | null (the generated JS Tensor method; null when the JS layer
//                  writes that method by hand: pow, gelu),
//          kinds: "float" | "numeric" | "any"}
// Rows come in ops.def's order. Only the first four arguments of a row are read here; the
// doc sentence (read at build time by scripts/gen_ops.mjs for the TypeScript declarations;
// nothing reads it at run time, so the engine does not carry the strings) and the rest
// (kernel expressions, backward rules) are ignored.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <cstring>
#include <string>

#include "js_tensor.hpp"
#include "kiln/backend/backend.hpp"
#include "kiln/core/dtype.hpp"

namespace kiln_js {
namespace {

using emscripten::val;

/// "FLOAT" -> "float", ... (the KINDS column, stringified).
const char* kinds_name(const char* kinds) {
  if (std::strcmp(kinds, "FLOAT") == 0) return "float";
  if (std::strcmp(kinds, "NUMERIC") == 0) return "numeric";
  return "any";
}

/// A JS string from UTF-8 text: through Embind's std::string, which decodes UTF-8;
/// val(const char*) would read the bytes as Latin-1.
val text(const char* s) { return val(std::string(s)); }

val row(int id, const char* name, const char* method, const char* kinds) {
  val out = val::object();
  out.set("id", id);
  out.set("name", text(name));
  // `_` marks a method the JS layer writes by hand (ops.def's header).
  out.set("method", std::strcmp(method, "_") == 0 ? val::null() : text(method));
  out.set("kinds", text(kinds_name(kinds)));
  return out;
}

val op_table() {
  val binary = val::array();
  val unary = val::array();
  val compare = val::array();
  val reduce = val::array();
#define KILN_BINARY_OP(Name, snake, jsMethod, KINDS, doc, ...) \
  binary.call<void>("push", row(static_cast<int>(kiln::BinaryOp::Name), #snake, #jsMethod, #KINDS));
#define KILN_UNARY_OP(Name, snake, jsMethod, KINDS, doc, ...) \
  unary.call<void>("push", row(static_cast<int>(kiln::UnaryOp::Name), #snake, #jsMethod, #KINDS));
#define KILN_COMPARE_OP(Name, snake, jsMethod, KINDS, doc, ...) \
  compare.call<void>("push", row(static_cast<int>(kiln::CompareOp::Name), #snake, #jsMethod, #KINDS));
#define KILN_REDUCE_OP(Name, snake, jsMethod, KINDS, doc, ...) \
  reduce.call<void>("push", row(static_cast<int>(kiln::ReduceOp::Name), #snake, #jsMethod, #KINDS));
#include "kiln/backend/ops.def"  // undefines the four macros at its end
  val out = val::object();
  out.set("binary", binary);
  out.set("unary", unary);
  out.set("compare", compare);
  out.set("reduce", reduce);
  return out;
}

/// The dtypes with their enum values (kiln::DType) and package names ('float32', ...): the JS
/// layer's dtype codes come from here, never from a copy.
val dtype_table() {
  val dtypes = val::array();
  for (const kiln::DType d : {kiln::DType::F32, kiln::DType::I32, kiln::DType::Bool}) {
    val entry = val::object();
    entry.set("code", static_cast<int>(d));
    entry.set("name", text(js_dtype_name(d)));
    dtypes.call<void>("push", entry);
  }
  return dtypes;
}

}  // namespace
}  // namespace kiln_js

EMSCRIPTEN_BINDINGS(kiln_op_table) {
  emscripten::function("opTable", &kiln_js::op_table);
  emscripten::function("dtypeTable", &kiln_js::dtype_table);
}
