// The page's view of MNIST loading (the worker's `mnistLoad` messages, mnist-fetch.js): a
// progress bar in MB of the gzip chunks, then one line that says what was downloaded and
// what came from this browser's cache, or why loading failed. Its element carries
// data-state (loading | done | failed),
// data-fetched, data-cached and data-total (bytes) for the tests.
import { mb } from './mnist-fetch.js';
import './mnist-load.css';

/** One line of text for a progress report of the MNIST loader. */
export function describeLoad(p) {
  const seconds = `${p.seconds.toFixed(1)} s`;
  if (p.failed) return `MNIST could not be loaded (${mb(p.fetched + p.cached)} of ${mb(p.total)} arrived): ${p.error.replace(/^MNIST: /, '')}`;
  if (!p.done) {
    const head = p.fetched > 0 || p.cached === 0 ? 'Downloading MNIST' : 'Reading MNIST from this browser\'s cache';
    const fromCache = p.cached > 0 && p.fetched > 0 ? ` (${mb(p.cached)} of it from this browser's cache)` : '';
    return `${head}: ${mb(p.fetched + p.cached)} of ${mb(p.total)}${fromCache}…`;
  }
  const note = p.cacheNote ? ` Not kept for the next visit: ${p.cacheNote.replace(/^not kept for the next visit /, '')}.` : '';
  if (p.total === 0) return 'MNIST: already loaded (nothing to download).';
  if (p.fetched === 0) {
    return `MNIST: ${mb(p.cached)} read from this browser's cache in ${seconds}; nothing downloaded.`;
  }
  const unpacked = ` (gzip; ${mb(p.rawTotal)} unpacked)`;
  if (p.cached === 0) {
    const kept = p.cacheNote ? note : ' Kept in this browser\'s cache: the next visit downloads nothing.';
    return `MNIST: downloaded ${mb(p.fetched)}${unpacked} in ${seconds}.${kept}`;
  }
  return `MNIST: downloaded ${mb(p.fetched)}, read ${mb(p.cached)} from this browser's cache${unpacked}, in ${seconds}.${note}`;
}

/** The progress bar and its line, placed after `anchor` (shown for MNIST only). */
export class MnistLoadView {
  constructor(anchor) {
    this.el = document.createElement('div');
    this.el.className = 'mnist-load mnist-only';
    this.el.id = 'mnist-load';
    this.bar = document.createElement('progress');
    this.bar.id = 'mnist-progress';
    this.bar.max = 1;
    this.bar.value = 0;
    this.bar.setAttribute('aria-label', 'MNIST download (megabytes)');
    this.text = document.createElement('p');
    this.text.id = 'mnist-load-text';
    this.text.setAttribute('aria-live', 'polite');
    this.el.append(this.bar, this.text);
    this.el.hidden = true;
    anchor.after(this.el);
  }

  /** Shows a `mnistLoad` message. */
  update(m) {
    const { el, bar, text } = this;
    el.hidden = false;
    el.dataset.state = m.failed ? 'failed' : m.done ? 'done' : 'loading';
    // Busy while loading: screen readers announce the final line, not every step.
    el.setAttribute('aria-busy', String(!m.done && !m.failed));
    el.dataset.fetched = String(m.fetched);
    el.dataset.cached = String(m.cached);
    el.dataset.total = String(m.total);
    bar.max = Math.max(1, m.total);
    bar.value = m.total ? m.fetched + m.cached : 1;
    bar.setAttribute('aria-valuetext', `${mb(m.fetched + m.cached)} of ${mb(m.total)}`);
    bar.hidden = m.done || m.failed;
    text.classList.toggle('error', Boolean(m.failed));
    text.textContent = describeLoad(m);
  }
}
