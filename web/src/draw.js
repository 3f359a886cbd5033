// The draw-a-digit canvas: white ink on black like MNIST, pointer input (mouse, pen,
// touch). Calls onChange(grey28) with the MNIST-like 28 x 28 image after each stroke
// segment, at most once per animation frame.
import { drawingTo28 } from './mnist.js';

export class DrawPad {
  constructor(canvas, onChange) {
    this.canvas = canvas;
    this.ctx = canvas.getContext('2d', { willReadFrequently: true });
    this.onChange = onChange;
    this.drawing = false;
    this.last = null;
    this.frame = 0;
    this.clear(false);
    canvas.addEventListener('pointerdown', (e) => {
      e.preventDefault();
      canvas.setPointerCapture?.(e.pointerId);
      this.drawing = true;
      this.last = this.pos(e);
      this.line(this.last, this.last);
    });
    canvas.addEventListener('pointermove', (e) => {
      if (!this.drawing) return;
      const p = this.pos(e);
      this.line(this.last, p);
      this.last = p;
    });
    const end = () => {
      this.drawing = false;
      this.last = null;
    };
    canvas.addEventListener('pointerup', end);
    canvas.addEventListener('pointercancel', end);
    canvas.addEventListener('pointerleave', end);
  }

  pos(e) {
    const r = this.canvas.getBoundingClientRect();
    return {
      x: ((e.clientX - r.left) / r.width) * this.canvas.width,
      y: ((e.clientY - r.top) / r.height) * this.canvas.height,
    };
  }

  line(a, b) {
    const { ctx } = this;
    ctx.strokeStyle = '#fff';
    ctx.lineCap = 'round';
    ctx.lineJoin = 'round';
    ctx.lineWidth = this.canvas.width / 12;
    ctx.beginPath();
    ctx.moveTo(a.x, a.y);
    ctx.lineTo(b.x + 0.01, b.y);
    ctx.stroke();
    this.changed();
  }

  clear(notify = true) {
    this.ctx.fillStyle = '#000';
    this.ctx.fillRect(0, 0, this.canvas.width, this.canvas.height);
    if (notify) this.onChange(null);
  }

  /** Paints a 28 x 28 byte image (e.g. a test digit) scaled up onto the pad. */
  paintImage(bytes) {
    const img = new ImageData(28, 28);
    for (let j = 0; j < 784; j++) {
      img.data[4 * j] = img.data[4 * j + 1] = img.data[4 * j + 2] = bytes[j];
      img.data[4 * j + 3] = 255;
    }
    const off = new OffscreenCanvas(28, 28);
    off.getContext('2d').putImageData(img, 0, 0);
    this.ctx.imageSmoothingEnabled = true;
    this.ctx.drawImage(off, 0, 0, this.canvas.width, this.canvas.height);
    this.changed();
  }

  changed() {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.onChange(this.read());
    });
  }

  /** The drawing as an MNIST-like 28 x 28 grey image (0..1), or null if empty. */
  read() {
    const { width: w, height: h } = this.canvas;
    const rgba = this.ctx.getImageData(0, 0, w, h).data;
    const ink = new Float32Array(w * h);
    let any = false;
    for (let i = 0; i < w * h; i++) {
      ink[i] = rgba[4 * i] / 255;
      if (ink[i] > 0.05) any = true;
    }
    if (w !== h) throw new Error('the drawing pad must be square');
    return any ? drawingTo28(ink, w) : null;
  }
}
