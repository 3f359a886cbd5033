// "Look inside" on the page: the network graph of a toy model (inside-graph.js) and the MNIST
// views (inside-mnist.js), fed by the worker's `inside` messages (after each evaluation,
// while the section is open) and `inspected` answers (the drawn digit: asked again while
// the user draws, at most one request in flight, and after each evaluation).
import './inside.css';
import { NetworkGraph } from './inside-graph.js';
import { MnistInside } from './inside-mnist.js';
import { normaliseGrey } from './mnist.js';

export class Inside {
  /**
   * @param {HTMLDetailsElement} root the section (a <details>) holding the views
   * @param {Worker} worker the training worker (worker.js)
   */
  constructor(root, worker) {
    this.root = root;
    this.worker = worker;
    this.body = root.querySelector('.inside-body');
    this.status = root.querySelector('.inside-status');
    this.toyBox = document.createElement('div');
    this.toyBox.className = 'inside-toy';
    this.mnistBox = document.createElement('div');
    this.mnistBox.className = 'inside-mnist';
    this.body.append(this.toyBox, this.mnistBox);
    this.graph = new NetworkGraph(this.toyBox);
    this.mnist = new MnistInside(this.mnistBox);
    this.grey = null;
    this.busy = false;
    this.dirty = false;
    this.nextId = 0;
    this.pendingId = 0;
    root.addEventListener('toggle', () => {
      worker.postMessage({ type: 'inside', on: root.open });
      if (root.open && this.grey) this.inspect();
    });
  }

  /** A new set-up: forget the model's views. */
  reset() {
    this.graph.clear();
    this.mnist.clear();
    this.status.textContent = '';
    this.busy = false;
    this.dirty = false;
    this.pendingId = 0;
    delete this.root.dataset.inspecting;
    if (this.grey) this.inspect();
  }

  /** The worker's `inside` message (after an evaluation). */
  onInside(m) {
    if (m.error) {
      this.status.textContent = `The views could not be computed: ${m.error.message}`;
      return;
    }
    this.status.textContent = '';
    if (m.toy) this.graph.update(m.toy, { step: m.step, epoch: m.epoch });
    if (m.weights) {
      this.mnist.showWeights(m.weights);
      if (this.grey) this.inspect(); // the model changed: the drawn digit's views too
    }
  }

  /** The drawn digit changed (a 28 x 28 grey image in [0, 1], or null when cleared). */
  onDrawing(grey) {
    this.grey = grey;
    if (!grey) {
      this.mnist.clearDrawing();
      return;
    }
    this.inspect();
  }

  /** Asks the worker for the drawn digit's activations and saliency (one request at a time). */
  inspect() {
    if (!this.root.open || !this.grey) return;
    if (this.busy) {
      this.dirty = true;
      return;
    }
    this.busy = true;
    this.root.dataset.inspecting = 'busy';
    this.pendingId = ++this.nextId;
    this.pendingGrey = this.grey;
    this.worker.postMessage({ type: 'inspect', id: this.pendingId, x: normaliseGrey(this.grey) });
  }

  /** The worker's answer to inspect(). */
  onInspected(m) {
    if (m.id !== this.pendingId) return;
    this.busy = false;
    if (m.error) {
      // no model yet (still loading): the next evaluation asks again
      if (m.error.message !== 'no model yet') this.status.textContent = `The drawn digit could not be inspected: ${m.error.message}`;
    } else if (this.grey) {
      this.mnist.showInspection(m, this.pendingGrey);
    }
    if (this.dirty) {
      this.dirty = false;
      this.inspect();
    }
    // 'idle': the views show the latest drawing
    if (!this.busy) this.root.dataset.inspecting = 'idle';
  }
}
