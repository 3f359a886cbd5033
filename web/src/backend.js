// The playground's backend switch (issue 21): CPU (the WebAssembly engine, the default) or GPU
// (kiln-dl's webgpu backend), offered only when navigator.gpu yields an adapter, whose name it
// shows; without one the GPU choice is disabled with the reason. The worker (worker.js) owns
// the engines: the switch sends it `backend {want}`, and its answer `backend {backend, info,
// error?, lost?}` says which engine runs (the cpu one, with why, when the GPU failed).
// document.body.dataset.backend: 'cpu' | 'webgpu' | 'switching'; dataset.gpu: 'probing' |
// 'available' | 'unavailable'.

/**
 * Asks the browser for a GPU adapter (without a device: the worker's init() makes its own).
 * @returns {Promise<{adapter: string, reason?: undefined} | {adapter?: undefined, reason: string}>}
 *   the adapter's name ("vendor architecture description", GPUAdapterInfo) or why there is none
 */
export async function probeGpu(nav = globalThis.navigator) {
  if (!nav?.gpu) return { reason: 'this browser has no WebGPU (navigator.gpu: it needs a browser that has it, in a secure context)' };
  let adapter;
  try {
    adapter = await nav.gpu.requestAdapter();
  } catch (e) {
    return { reason: `navigator.gpu.requestAdapter() failed: ${e?.message ?? e}` };
  }
  if (!adapter) return { reason: 'the browser found no GPU adapter (navigator.gpu.requestAdapter() gave none)' };
  const info = adapter.info ?? (typeof adapter.requestAdapterInfo === 'function' ? await adapter.requestAdapterInfo().catch(() => ({})) : {});
  const name = [info.vendor, info.architecture, info.description || info.device].filter((x) => x).join(' ');
  return { adapter: name || 'unnamed adapter' };
}

/** The switch's DOM (index.html's #backend) and its state. */
export class BackendSwitch {
  /**
   * @param {HTMLElement} root the #backend group (radios name="backend": cpu, webgpu; #backend-note)
   * @param {{request: (want: 'cpu' | 'webgpu') => void, say: (text: string, kind?: string) => void}} host
   *   request: asks the worker for a backend (then sets up again); say: a message at the top
   */
  constructor(root, host) {
    this.root = root;
    this.host = host;
    this.cpu = root.querySelector('input[value="cpu"]');
    this.gpu = root.querySelector('input[value="webgpu"]');
    this.note = root.querySelector('.backend-note');
    this.adapter = null;
    this.current = 'cpu';
    this.want = 'webgpu'; // what the GPU choice asks the worker for
    for (const input of [this.cpu, this.gpu]) {
      input.addEventListener('change', () => input.checked && this.choose(input.value === 'webgpu' ? this.want : input.value));
    }
    this.gpu.disabled = true;
    document.body.dataset.backend = 'cpu';
    document.body.dataset.gpu = 'probing';
    this.note.textContent = 'Looking for a GPU…';
  }

  /**
   * Probes navigator.gpu and offers the GPU when there is an adapter (or says why not).
   * `test` 'cpu-async' (the page's `?backendTest=cpu-async`, for the e2e tests) offers instead
   * the cpu engine through the GPU backend's code path (worker.js's currentEngine).
   */
  async probe(nav, test = null) {
    this.want = test === 'cpu-async' ? test : 'webgpu';
    const r = test === 'cpu-async' ? { adapter: 'the cpu engine, asynchronous path (test)' } : await probeGpu(nav);
    if (r.adapter) {
      this.adapter = r.adapter;
      this.gpu.disabled = false;
      this.gpu.parentElement.title = `Train on the GPU (WebGPU): ${r.adapter}`;
      this.note.textContent = `GPU: ${r.adapter}`;
      document.body.dataset.gpu = 'available';
    } else {
      this.gpu.disabled = true;
      this.gpu.parentElement.title = `No GPU: ${r.reason}`;
      this.note.textContent = `GPU unavailable: ${r.reason}. Everything runs on the CPU.`;
      document.body.dataset.gpu = 'unavailable';
    }
    return r;
  }

  /** The reader picked a backend: the worker loads it, the page sets up again on its answer. */
  choose(want) {
    if (want === this.current) return;
    document.body.dataset.backend = 'switching';
    this.cpu.disabled = true;
    this.gpu.disabled = true;
    this.note.textContent = want !== 'cpu' ? `Starting the GPU backend on ${this.adapter}…` : 'Going back to the CPU…';
    this.host.request(want);
  }

  /**
   * The worker's answer: which backend runs now. When the GPU was asked for and failed (init,
   * or a device lost later) the page runs on the CPU and says why.
   * @param {{backend: 'cpu' | 'webgpu', info: object, error?: {message: string, code: string}, lost?: boolean}} m
   */
  onBackend(m) {
    this.current = m.backend;
    document.body.dataset.backend = m.backend;
    this.cpu.disabled = false;
    this.gpu.disabled = this.adapter === null || (m.error !== undefined && !m.lost);
    (m.backend !== 'cpu' ? this.gpu : this.cpu).checked = true;
    if (m.backend === 'cpu-async') this.note.textContent = `GPU path on ${this.adapter}`;
    else if (m.backend === 'webgpu') {
      this.note.textContent = `GPU: ${m.info?.adapter ?? this.adapter}`;
    } else if (m.error) {
      const why = `${m.error.code && m.error.code !== 'Internal' ? `[${m.error.code}] ` : ''}${m.error.message}`;
      this.note.textContent = m.lost ? `The GPU was lost; back on the CPU (${why}).` : `GPU failed to start; running on the CPU (${why}).`;
      this.host.say(m.lost ? `The GPU stopped working (${why}): the playground went back to the CPU and started a new model.` : `The GPU backend could not start (${why}): the playground runs on the CPU.`, 'warn');
    } else {
      this.note.textContent = this.adapter ? `GPU: ${this.adapter}` : this.note.textContent;
    }
  }

  /** The engine line's wording for the backend in use. */
  static describe(info) {
    if (info?.engine === 'webgpu') return `Engine: kiln-dl, WebGPU on ${info.adapter ?? 'the GPU'}, in a Web Worker.`;
    const i = info ?? {};
    // The relaxed-SIMD builds ('simd-relaxed', 'simd-threads-relaxed') multiply-add with an FMA.
    const fma = typeof i.build === 'string' && i.build.endsWith('-relaxed') ? ' with FMA (relaxed SIMD)' : '';
    return `Engine: kiln-dl, WebAssembly${i.simd ? ' SIMD' : ''}${i.arch ? ` (${i.arch})` : ''}${fma}, ${i.threads ?? 1} thread${(i.threads ?? 1) > 1 ? 's' : ''}, in a Web Worker.`;
  }
}
