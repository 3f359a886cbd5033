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
    const box = e.devicePixelContentBoxSize?.[0];
    if (box) apply(box.inlineSize);
    else apply(e.contentRect.width * devicePixelRatio);
  });
  try {
    observer.observe(canvas, { box: 'device-pixel-content-box' });
  } catch {
    observer.observe(canvas); // browsers without device-pixel-content-box
  }
}
