// The decision-boundary canvas at its device-pixel size (issue 18: it was a 50 x 50 grid
// upscaled): the canvas's bitmap follows its displayed size times devicePixelRatio, and the
// page asks the worker for a grid of that size.

/** The largest bitmap side the page asks for (1200² points is ~0.4 s for a small MLP). */
export const MAX_PIXELS = 1200;

/**
 * Keeps `canvas` (square) at its device-pixel size: on every change of its displayed size
 * or of the device-pixel ratio, sets width = height = that size and calls onSize(size).
 * @param {HTMLCanvasElement} canvas
 * @param {(size: number) => void} onSize
 */
export function watchCanvasPixels(canvas, onSize) {
  let last = 0;
  const apply = (devicePx) => {
    if (!(devicePx >= 1)) return; // hidden (MNIST): keep the last size
    const size = Math.max(1, Math.min(MAX_PIXELS, Math.round(devicePx)));
    if (size === last) return;
    last = size;
    canvas.width = size;
    canvas.height = size;
    canvas.dataset.pixels = String(size);
    onSize(size);
  };
  const observer = new ResizeObserver((entries) => {
    const e = entries[entries.length - 1];
    const css = e.contentRect.width * devicePixelRatio;
    // The exact device-pixel box where the browser gives it (it ignores an emulated
    // device-pixel ratio, so it is used only when it agrees with CSS size x ratio).
    const box = e.devicePixelContentBoxSize?.[0]?.inlineSize;
    apply(box && Math.abs(box - css) <= 2 ? box : css);
  });
  try {
    observer.observe(canvas, { box: 'device-pixel-content-box' });
  } catch {
    observer.observe(canvas); // browsers without device-pixel-content-box
  }
  // A change of devicePixelRatio alone (zoom, another screen): measure again.
  const watchRatio = () => {
    matchMedia(`(resolution: ${devicePixelRatio}dppx)`).addEventListener(
      'change',
      () => {
        const w = canvas.getBoundingClientRect().width - canvas.clientLeft * 2;
        apply(w * devicePixelRatio);
        watchRatio();
      },
      { once: true },
    );
  };
  watchRatio();
}
