// Internal: finishes the Emscripten module for both entry points (index.js, node.js).

/** Adds the package's spelling of Embind's `delete()`: `tensor.dispose()`. */
export function finishModule(module) {
  const proto = module.Tensor.prototype;
  if (!Object.prototype.hasOwnProperty.call(proto, 'dispose')) {
    Object.defineProperty(proto, 'dispose', {
      value: function dispose() {
        if (!this.isDeleted()) this.delete();
      },
      writable: true,
      configurable: true,
    });
  }
  return module;
}
