/**
 * @fileoverview Closure Compiler externs for the glue (CMakeLists.txt, `--closure 1`): the
 * properties the package's JS layer reads off Embind's objects keep their names. Embind marks
 * a free function with `argCount` (and an overloaded one with `overloadTable`); the error
 * boundary (bindings/js/boundary.ts) and scripts/gen_engines.mjs find the engine's functions by
 * them.
 * @externs
 */

/** @type {number} */
Function.prototype.argCount;

/** @type {!Object} */
Function.prototype.overloadTable;
