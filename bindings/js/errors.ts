/// <reference lib="esnext.disposable" preserve="true" />
// kiln-dl's error class. The engine (C++ kiln::Error) and the package's JS layer throw
// only KilnError, with a stable `code` (DESIGN.md "Errors, limits and memory") and a
// message `<op>: <what is wrong>: <what was given>`.

/** The codes a KilnError may carry. */
export const ERROR_CODES = Object.freeze([
  'Shape', 'Rank', 'DType', 'Index', 'Value', 'Config', 'Device', 'NonFinite', 'Format',
  'Limit', 'OutOfMemory', 'State', 'Disposed', 'Type', 'Io', 'Busy', 'Internal',
] as const);

/**
 * Stable error codes (DESIGN.md "Errors, limits and memory"). `Internal` marks a failure
 * that is not a Kiln error (a bug: please report it). `Busy`: the object is in use (a
 * Learner while fit() runs; the engine itself while a call reads an argument whose getter
 * or Proxy calls back into it: the engine is not re-entrant).
 */
export type ErrorCode = (typeof ERROR_CODES)[number];

/**
 * Every error the engine (C++ `kiln::Error`, same code and message) and the package throw.
 * The message reads `<op>: <what is wrong>: <what was given>`, e.g.
 * `matmul: inner dimensions differ: lhs [2, 3] vs rhs [4, 5] (3 != 4)`.
 * The module stays usable after any KilnError (also after `OutOfMemory`).
 */
export class KilnError extends Error {
  declare readonly name: 'KilnError';
  code: ErrorCode;

  /**
   * `new KilnError("Value", "op: what: given")`; the package's own errors are made this way.
   * @param code one of ERROR_CODES
   * @param message `<op>: <what is wrong>: <what was given>`
   */
  constructor(code: ErrorCode, message: string) {
    super(message);
    (this as { name: string }).name = 'KilnError';
    this.code = code;
  }
}
Object.defineProperty(KilnError.prototype, 'name', { value: 'KilnError', writable: true, configurable: true });

// `using t = ...` (explicit resource management) needs Symbol.dispose; Node 20 may lack it.
if (typeof Symbol.dispose !== 'symbol') {
  Object.defineProperty(Symbol, 'dispose', { value: Symbol('Symbol.dispose'), configurable: true });
}
