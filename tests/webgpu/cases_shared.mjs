// The shared PyTorch reference cases (tests/native/cases/{cases,round2}.jsonl, the copies of
// ../shared/cases) on the Wgpu backend, and on the Cpu backend beside it: every record whose
// category the backends compute runs in tests/webgpu/ops_shared_cases.cpp (one function per
// case id, the graph of its native test), and each tensor it returns is compared here with the
// record's `expected` value under the record's `tolerance` (|got - exp| <= abs + rel·|exp|;
// nan matches nan, ±inf the same infinity, ints and bools exactly, shapes exactly with
// PyTorch's [] as Kiln's [1]). A key the case expects rejected (`{"error": true}`) must have
// thrown. Every expected key must be compared, unless the run says why it could not compute it
// on its backend (only Wgpu may: a synchronous read, listed under "not checked" in the log).
// The page fetches the files from the served tree (tests/e2e/webgpu.e2e.mjs serves
// /tests/native/cases/), so the build embeds nothing.

/** Records not run on the backends, with the reason. */
export const SKIPPED = {
  safetensors_load_edge_cases: 'serialization: SafeTensors parsing on the host, no backend op (tests/native/record/round2_safetensors_test.cpp)',
  onecycle_lr_schedule: 'optim: a learning-rate schedule is host scalars, no tensor (tests/native/optim/round2_cases_test.cpp)',
  reduce_lr_on_plateau_patience_cooldown: 'optim: a learning-rate schedule is host scalars, no tensor (tests/native/optim/round2_cases_test.cpp)',
};

/**
 * Kiln's deliberate departures from a case (tests/native/cases/README.md: write them down and
 * override the case): {id: {key: {expected, why}}}.
 */
export const OVERRIDES = {
  index_out_of_range_rejected: {
    'index_select_dim1_index-1': {
      expected: { shape: [2, 1], dtype: 'float32', data: [3, 6] },
      why: 'select wraps a negative index as NumPy/ONNX (PyTorch rejects it); gather rejects it as PyTorch (tests/js/ops_cases.test.mjs)',
    },
  },
};

async function records(file) {
  const res = await fetch(`/tests/native/cases/${file}`);
  if (!res.ok) throw new Error(`cannot fetch ${file}: ${res.status}`);
  return (await res.text()).split('\n').filter((l) => l.trim()).map((l) => ({ line: l, rec: JSON.parse(l) }));
}

const num = (v) => (v === 'nan' ? NaN : v === 'inf' ? Infinity : v === '-inf' ? -Infinity : v);
const kilnShape = (s) => (s.length === 0 ? [1] : s);
const kilnDtype = (d) => ({ float32: 'f32', float64: 'f32', int64: 'i32', int32: 'i32', bool: 'bool' })[d] ?? d;

function typed(dtype, buffer) {
  if (dtype === 'f32') return Array.from(new Float32Array(buffer));
  if (dtype === 'i32') return Array.from(new Int32Array(buffer));
  return Array.from(new Uint32Array(buffer)).map((v) => Number(v !== 0));
}

/** Null if `got` ({shape, dtype, data}) is expected tensor `exp` within `tol`, else why not. */
function compare(exp, got, tol) {
  // PyTorch's [] is Kiln's [1]; Autodiff's rank-erased ops (round2_ops_cases_test.cpp) may
  // also give a rank-0 result.
  const shape = exp.shape.length === 0 && got.shape.length === 0 ? [] : kilnShape(exp.shape);
  if (JSON.stringify(shape) !== JSON.stringify(got.shape)) return `shape ${JSON.stringify(got.shape)}, expected ${JSON.stringify(shape)}`;
  const dtype = kilnDtype(exp.dtype);
  if (dtype !== got.dtype) return `dtype ${got.dtype}, expected ${dtype}`;
  if (got.data.length !== exp.data.length) return `${got.data.length} values, expected ${exp.data.length}`;
  for (let i = 0; i < exp.data.length; i++) {
    const want = dtype === 'bool' ? Number(exp.data[i]) : num(exp.data[i]);
    const v = got.data[i];
    if (Number.isNaN(want)) {
      if (!Number.isNaN(v)) return `[${i}] ${v}, expected nan`;
    } else if (!Number.isFinite(want) || dtype !== 'f32') {
      if (v !== want) return `[${i}] ${v}, expected ${want}`;
    } else if (!(Math.abs(v - want) <= tol.abs + tol.rel * Math.abs(want))) {
      return `[${i}] ${v}, expected ${want} (|diff| ${Math.abs(v - want)}, tolerance ${tol.abs} + ${tol.rel}·|exp|)`;
    }
  }
  return null;
}

/**
 * The failures of one backend's run ({outs, notes} or {error}), reading its values with `read`.
 * Keys the run could not compute on its backend (note "skip: <key>: <why>", a synchronous read
 * on Wgpu: see ops_shared_cases.cpp) go to `skipped`.
 */
async function check(rec, run, read, skipped) {
  if (run.error) return [`threw ${run.error}`];
  const failures = [];
  const tol = rec.tolerance ?? { abs: 0, rel: 0 };
  const compared = new Set();
  for (const n of run.notes) {
    if (n.startsWith('fail: ')) failures.push(n.slice(6));
    else if (n.startsWith('skip: ')) {
      const key = n.slice(6, n.indexOf(': ', 6));
      compared.add(key);
      skipped.push(n.slice(6));
    }
    else if (n.startsWith('threw: ') || n.startsWith('returned: ')) {
      const key = n.slice(n.indexOf(' ') + 1).split(' (')[0];
      compared.add(key);
      if (!rec.expected[key]?.error) failures.push(`${key}: not a rejection in the case (${n})`);
      else if (n.startsWith('returned: ')) failures.push(`${key}: returned, the case expects it rejected`);
    }
  }
  for (const o of run.outs) {
    const exp = rec.expected[o.key];
    compared.add(o.key);
    if (!exp) { failures.push(`${o.key}: no such expected key`); continue; }
    if (exp.error) { failures.push(`${o.key}: returned, the case expects it rejected`); continue; }
    const why = compare(exp, { shape: o.shape, dtype: o.dtype, data: await read(o) }, tol);
    if (why) failures.push(`${o.key}: ${why}`);
  }
  for (const key of Object.keys(rec.expected)) {
    if (!compared.has(key)) failures.push(`${key}: not compared`);
  }
  return failures;
}

async function runShared(M, line, rec) {
  const r = M.runSharedCase(rec.id, line);
  if (r.missing) return `no case ${rec.id} in tests/webgpu/ops_shared_cases.cpp (add it, or list it in SKIPPED with the reason)`;
  try {
    const skipped = { wgpu: [], cpu: [] };
    const gpu = await check(rec, r.gpu, async (o) => {
      const n = o.shape.reduce((a, b) => a * b, 1);
      return typed(o.dtype, await M.kgRead(o.buffer, Math.max(o.bytes, 4))).slice(0, n);
    }, skipped.wgpu);
    const cpu = await check(rec, r.cpu, async (o) => o.data, skipped.cpu);
    const out = [...gpu.map((f) => `wgpu: ${f}`), ...cpu.map((f) => `cpu: ${f}`)];
    if (skipped.cpu.length) out.push(...skipped.cpu.map((s) => `cpu: skipped ${s}`));  // only Wgpu may skip
    return {
      failure: out.length ? out.join('; ') : null,
      skipped: skipped.wgpu.map((s) => `wgpu: ${s}`),
    };
  } finally {
    M.freeSharedCase();
  }
}

const all = [...(await records('cases.jsonl')), ...(await records('round2.jsonl'))];
for (const { rec } of all) {
  for (const [key, o] of Object.entries(OVERRIDES[rec.id] ?? {})) rec.expected[key] = o.expected;
}
export const cases = all.map(({ line, rec }) => ({
  name: `${rec.category}: ${rec.id}${SKIPPED[rec.id] ? ' (skipped)' : ''}`,
  run: SKIPPED[rec.id] ? async () => ({ failure: null, skipped: [`not run: ${SKIPPED[rec.id]}`] }) : (M) => runShared(M, line, rec),
}));
