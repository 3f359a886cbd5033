// kiln-dl's error class. The engine (C++ kiln::Error) and the package's JS layer throw
// only KilnError, with a stable `code` (DESIGN.md "Errors, limits and memory") and a
// message `<op>: <what is wrong>: <what was given>`.

/** The codes a KilnError may carry. */
export const ERROR_CODES = Object.freeze([
  'Shape', 'Rank', 'DType', 'Index', 'Value', 'Config', 'Device', 'NonFinite', 'Format',
  'Limit', 'OutOfMemory', 'State', 'Disposed', 'Type', 'Io', 'Busy', 'Internal',
]);

/** An error of the engine or of the package: `err instanceof KilnError`, `err.code`. */
export class KilnError extends Error {
  /**
   * @param {string} code one of ERROR_CODES
   * @param {string} message `<op>: <what is wrong>: <what was given>`
   */
  constructor(code, message) {
    super(message);
    this.name = 'KilnError';
    this.code = code;
  }
}
Object.defineProperty(KilnError.prototype, 'name', { value: 'KilnError', writable: true, configurable: true });

// `using t = ...` (explicit resource management) needs Symbol.dispose; Node 20 may lack it.
if (typeof Symbol.dispose !== 'symbol') {
  Object.defineProperty(Symbol, 'dispose', { value: Symbol('Symbol.dispose'), configurable: true });
}
