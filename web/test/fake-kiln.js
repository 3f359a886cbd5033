// TEMPORARY FAKE of kiln-dl — NOT the engine. A pure-JS stand-in for the subset of the
// BRIEF6.md contract the playground uses (init, backendInfo, nn.sequential with linear /
// activations / dropout, optim.sgd / adam / adamW, Learner.trainBatch / predict,
// saveSafetensors / loadSafetensors), written while the real models/training bindings
// (branches h-js, h-train) did not exist yet. Used only by the playground's own tests of
// its worker logic and, with KILN_FAKE=1, to develop the page. The real app imports
// 'kiln-dl'. Convolutions are not implemented (they throw).

class FakeKilnError extends Error {
  constructor(code, message) {
    super(message);
    this.name = 'KilnError';
    this.code = code;
  }
}

function rng(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ACT = {
  relu: [(v) => (v > 0 ? v : 0), (v, y) => (v > 0 ? 1 : 0)],
  tanh: [Math.tanh, (v, y) => 1 - y * y],
  sigmoid: [(v) => 1 / (1 + Math.exp(-v)), (v, y) => y * (1 - y)],
  leakyRelu: [(v) => (v > 0 ? v : 0.01 * v), (v) => (v > 0 ? 1 : 0.01)],
  silu: [(v) => v / (1 + Math.exp(-v)), (v) => { const s = 1 / (1 + Math.exp(-v)); return s * (1 + v * (1 - s)); }],
  gelu: [
    (v) => 0.5 * v * (1 + Math.tanh(0.7978845608 * (v + 0.044715 * v * v * v))),
    (v) => {
      const u = 0.7978845608 * (v + 0.044715 * v * v * v);
      const t = Math.tanh(u);
      return 0.5 * (1 + t) + 0.5 * v * (1 - t * t) * 0.7978845608 * (1 + 3 * 0.044715 * v * v);
    },
  ],
};

class Sequential {
  constructor(spec, seed) {
    if (!spec || !Array.isArray(spec.layers)) throw new FakeKilnError('Config', 'sequential: spec.layers must be an array');
    this.config = JSON.parse(JSON.stringify(spec));
    this.layers = [];
    this.training = true;
    const r = rng(seed);
    let idx = 0;
    for (const l of spec.layers) {
      if (l.type === 'linear') {
        const { dInput: din, dOutput: dout } = l;
        const bound = 1 / Math.sqrt(din); // PyTorch's default (Kaiming uniform a=sqrt 5)
        const w = new Float32Array(dout * din);
        const b = new Float32Array(dout);
        for (let i = 0; i < w.length; i++) w[i] = (2 * r() - 1) * bound;
        for (let i = 0; i < b.length; i++) b[i] = (2 * r() - 1) * bound;
        this.layers.push({ type: 'linear', index: idx, din, dout, w, b, gw: new Float32Array(w.length), gb: new Float32Array(dout) });
      } else if (ACT[l.type]) {
        this.layers.push({ type: 'act', index: idx, fn: ACT[l.type] });
      } else if (l.type === 'dropout') {
        this.layers.push({ type: 'dropout', index: idx, prob: l.prob, rng: rng(seed + 17) });
      } else {
        throw new FakeKilnError('Config', `fake kiln: layer type "${l.type}" is not implemented by the fake`);
      }
      idx++;
    }
  }

  get numParams() {
    return this.layers.reduce((s, l) => s + (l.type === 'linear' ? l.w.length + l.b.length : 0), 0);
  }

  summary() {
    return this.layers.map((l) => (l.type === 'linear' ? `${l.index}: Linear(${l.din} -> ${l.dout})` : `${l.index}: ${l.type}`)).join('\n');
  }

  eval() {
    this.training = false;
  }

  train() {
    this.training = true;
  }

  forward(x, n) {
    const cache = [];
    let h = x;
    let width = this.layers.find((l) => l.type === 'linear').din;
    for (const l of this.layers) {
      if (l.type === 'linear') {
        const out = new Float32Array(n * l.dout);
        for (let i = 0; i < n; i++) {
          for (let o = 0; o < l.dout; o++) {
            let s = l.b[o];
            const wr = o * l.din;
            const xr = i * l.din;
            for (let k = 0; k < l.din; k++) s += h[xr + k] * l.w[wr + k];
            out[i * l.dout + o] = s;
          }
        }
        cache.push({ l, input: h });
        h = out;
        width = l.dout;
      } else if (l.type === 'act') {
        const out = new Float32Array(h.length);
        for (let i = 0; i < h.length; i++) out[i] = l.fn[0](h[i]);
        cache.push({ l, input: h, output: out });
        h = out;
      } else {
        if (!this.training || l.prob === 0) {
          cache.push({ l, mask: null });
          continue;
        }
        const mask = new Float32Array(h.length);
        const out = new Float32Array(h.length);
        for (let i = 0; i < h.length; i++) {
          mask[i] = l.rng() < l.prob ? 0 : 1 / (1 - l.prob);
          out[i] = h[i] * mask[i];
        }
        cache.push({ l, mask });
        h = out;
      }
    }
    return { out: h, width, cache };
  }

  backward(cache, grad, n) {
    let g = grad;
    for (let c = cache.length - 1; c >= 0; c--) {
      const { l } = cache[c];
      if (l.type === 'linear') {
        const x = cache[c].input;
        const gin = new Float32Array(n * l.din);
        for (let i = 0; i < n; i++) {
          for (let o = 0; o < l.dout; o++) {
            const go = g[i * l.dout + o];
            if (go === 0) continue;
            l.gb[o] += go;
            const wr = o * l.din;
            const xr = i * l.din;
            for (let k = 0; k < l.din; k++) {
              l.gw[wr + k] += go * x[xr + k];
              gin[xr + k] += go * l.w[wr + k];
            }
          }
        }
        g = gin;
      } else if (l.type === 'act') {
        const { input, output } = cache[c];
        const gin = new Float32Array(g.length);
        for (let i = 0; i < g.length; i++) gin[i] = g[i] * l.fn[1](input[i], output[i]);
        g = gin;
      } else if (cache[c].mask) {
        const gin = new Float32Array(g.length);
        for (let i = 0; i < g.length; i++) gin[i] = g[i] * cache[c].mask[i];
        g = gin;
      }
    }
  }

  params() {
    const ps = [];
    for (const l of this.layers) {
      if (l.type === 'linear') {
        ps.push({ key: `${l.index}.weight`, shape: [l.dout, l.din], v: l.w, g: l.gw });
        ps.push({ key: `${l.index}.bias`, shape: [l.dout], v: l.b, g: l.gb });
      }
    }
    return ps;
  }

  saveSafetensors() {
    const ps = this.params();
    const header = {};
    let off = 0;
    for (const p of ps) {
      header[p.key] = { dtype: 'F32', shape: p.shape, data_offsets: [off, off + p.v.byteLength] };
      off += p.v.byteLength;
    }
    let json = JSON.stringify(header);
    while ((8 + json.length) % 8) json += ' ';
    const hb = new TextEncoder().encode(json);
    const out = new Uint8Array(8 + hb.length + off);
    new DataView(out.buffer).setBigUint64(0, BigInt(hb.length), true);
    out.set(hb, 8);
    let pos = 8 + hb.length;
    for (const p of ps) {
      out.set(new Uint8Array(p.v.buffer, p.v.byteOffset, p.v.byteLength), pos);
      pos += p.v.byteLength;
    }
    return out;
  }

  loadSafetensors(bytes) {
    const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const hl = Number(dv.getBigUint64(0, true));
    const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + hl)));
    for (const p of this.params()) {
      const e = header[p.key];
      if (!e || e.shape.join() !== p.shape.join()) {
        throw new FakeKilnError('Format', `loadSafetensors: tensor "${p.key}" missing or of another shape`);
      }
      const raw = bytes.slice(8 + hl + e.data_offsets[0], 8 + hl + e.data_offsets[1]);
      p.v.set(new Float32Array(raw.buffer));
    }
  }

  dispose() {}
}

function softmaxRows(z, n, k) {
  const p = new Float32Array(n * k);
  for (let i = 0; i < n; i++) {
    let m = -Infinity;
    for (let c = 0; c < k; c++) m = Math.max(m, z[i * k + c]);
    let s = 0;
    for (let c = 0; c < k; c++) s += (p[i * k + c] = Math.exp(z[i * k + c] - m));
    for (let c = 0; c < k; c++) p[i * k + c] /= s;
  }
  return p;
}

function makeOptimizer(kind, o) {
  return { kind, lr: o.lr ?? 1e-3, momentum: o.momentum ?? 0, wd: o.weightDecay ?? 0, beta1: o.beta1 ?? 0.9, beta2: o.beta2 ?? 0.999, eps: o.epsilon ?? 1e-8 };
}

class Learner {
  constructor(model, { optimizer, loss = 'crossEntropy' } = {}) {
    if (loss !== 'crossEntropy') throw new FakeKilnError('Config', 'fake Learner: only crossEntropy');
    this.model = model;
    this.opt = optimizer;
    this.t = 0;
    this.state = new Map();
  }

  trainBatch(x, y, n = y.length) {
    const m = this.model;
    const { out, width: k, cache } = m.forward(x, n);
    const p = softmaxRows(out, n, k);
    let loss = 0;
    let correct = 0;
    const g = new Float32Array(n * k);
    for (let i = 0; i < n; i++) {
      let best = 0;
      for (let c = 0; c < k; c++) {
        g[i * k + c] = p[i * k + c] / n;
        if (p[i * k + c] > p[i * k + best]) best = c;
      }
      g[i * k + y[i]] -= 1 / n;
      loss -= Math.log(Math.max(p[i * k + y[i]], 1e-30));
      if (best === y[i]) correct++;
    }
    for (const q of m.params()) q.g.fill(0);
    m.backward(cache, g, n);
    this.step();
    return { loss: loss / n, accuracy: correct / n };
  }

  step() {
    const o = this.opt;
    this.t++;
    for (const q of this.model.params()) {
      let st = this.state.get(q.key);
      if (!st) this.state.set(q.key, (st = { m: new Float32Array(q.v.length), v: new Float32Array(q.v.length) }));
      for (let i = 0; i < q.v.length; i++) {
        let g = q.g[i];
        if (o.kind !== 'adamw' && o.wd) g += o.wd * q.v[i];
        if (o.kind === 'sgd') {
          if (o.momentum) {
            st.m[i] = this.t === 1 ? g : o.momentum * st.m[i] + g;
            g = st.m[i];
          }
          q.v[i] -= o.lr * g;
        } else {
          if (o.kind === 'adamw' && o.wd) q.v[i] -= o.lr * o.wd * q.v[i];
          st.m[i] = o.beta1 * st.m[i] + (1 - o.beta1) * g;
          st.v[i] = o.beta2 * st.v[i] + (1 - o.beta2) * g * g;
          const mh = st.m[i] / (1 - o.beta1 ** this.t);
          const vh = st.v[i] / (1 - o.beta2 ** this.t);
          q.v[i] -= (o.lr * mh) / (Math.sqrt(vh) + o.eps);
        }
      }
    }
  }

  predict(x) {
    const din = this.model.layers.find((l) => l.type === 'linear').din;
    const n = x.length / din;
    const { out, width } = this.model.forward(x, n);
    return softmaxRows(out, n, width);
  }

  dispose() {}
}

export async function init() {
  return {
    backendInfo: () => ({ simd: false, threads: 1, arch: 'fake-js', build: 'fake' }),
    KilnError: FakeKilnError,
    nn: { sequential: (spec, { seed = 0 } = {}) => new Sequential(spec, seed) },
    optim: {
      sgd: (o) => makeOptimizer('sgd', o),
      adam: (o) => makeOptimizer('adam', o),
      adamW: (o) => makeOptimizer('adamw', o),
    },
    Learner,
  };
}
