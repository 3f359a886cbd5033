// A Node module-resolution hook for bench/wasm/mnist_epoch.mjs: tfjs-core 4.22 ships its
// gradient functions only as ES modules written for bundlers (relative imports without the
// ".js" extension), which Node's ESM loader refuses. This retries such a relative import with
// ".js" (or "/index.js") appended. Registered with node:module's register() before the
// dynamic import of @tensorflow/tfjs-core/dist/register_all_gradients.js.
export async function resolve(specifier, context, next) {
  try {
    return await next(specifier, context);
  } catch (error) {
    if (!['ERR_MODULE_NOT_FOUND', 'ERR_UNSUPPORTED_DIR_IMPORT'].includes(error?.code) || !specifier.startsWith('.') || specifier.endsWith('.js')) throw error;
    try {
      return await next(`${specifier}.js`, context);
    } catch {
      return next(`${specifier}/index.js`, context);
    }
  }
}
