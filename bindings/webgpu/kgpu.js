// The Wgpu backend's WebGPU calls (issue 21): an Emscripten --js-library linked into engines
// with the webgpu backend (engine/src/wgpu/runtime.cpp declares the kg_* imports). Quoted
// property names for everything of the WebGPU API, so Closure ADVANCED keeps them.
// C++ sees integer handles and synchronous calls only:
//   kg_init, kg_buffer, kg_upload, kg_release, kg_trim, kg_pipeline, kg_dispatch, kg_flush,
//   kg_status, kg_error_message, kg_max_buffer_size, kg_set_batching, kg_set_bind_group_cache.
// The device is acquired by JS *before* the module runs (navigator.gpu's requests are
// async) and passed as the module option `kilnGpuDevice`.
// JS-only entry points (Module.kg*): kgRead(id, bytes) (async readback through a staging
// buffer: an ArrayBuffer), kgIdle (flush + onSubmittedWorkDone), kgStats (counters:
// dispatches, submits, reads, bindGroups, bindGroupHits, buffersCreated, pooledReuse,
// pipelines), kgDevice, kgClearError.
//
// Work is recorded into one command encoder and one open compute pass per *batch*; the batch
// is submitted by kg_flush (before readbacks, when the parameter ring is full, and after every
// dispatch when batching is off). All batches between two reads run inside
// pushErrorScope('out-of-memory') + pushErrorScope('validation'), popped by the read: a push/pop
// pair costs more than a submit (80-170 us on Chromium, spike/FINDINGS.md on the webgpu-spike
// branch), so it is paid per read. The read awaits the two promises and rejects with
// {name: 'KilnError', code: 'Device' | 'OutOfMemory'} instead of hanging. device.lost and
// onuncapturederror set the same sticky error, which kg_status() reports to the next
// synchronous C++ op.
mergeInto(LibraryManager.library, {
  $KG__postset: 'Module["kgRead"] = function(id, bytes) { return KG.read(id, bytes); };' +
                'Module["kgIdle"] = function() { return KG.idle(); };' +
                'Module["kgStats"] = function() { return KG.stats(); };' +
                'Module["kgDevice"] = function() { return KG.dev; };' +
                'Module["kgClearError"] = function() { var e = KG.error; KG.error = null; return e; };',
  $KG: {
    dev: null, queue: null,
    gen: 0,                // the error-scope window (one per read) buffers are made in
    oomGen: {},            // windows in which a watched allocation ran out of memory
    BIG: 16777216,         // allocations from 16 MiB up get an out-of-memory scope of their own
    objs: [null], freeIds: [],
    enc: null, pass: null, inScope: false, scopes: [],
    batching: true,
    // parameter ring: one 256-byte slot per dispatch of the batch, uploaded once per flush
    PSLOT: 256, PSLOTS: 1024, pmirror: null, pbuf: null, pused: 0,
    pool: {},            // released buffers by byte size, reusable by kernels' outputs
    layouts: {}, layoutSerial: 0,
    // (created in kg_init: a library object's fields are serialized as literals at link time,
    // so `new Map()` here would arrive as {})
    cacheBindGroups: true, bgCache: null, dyn: null,
    serialOf: null, nextSerial: 0,
    serial: function(b) { var s = KG.serialOf.get(b); if (s === undefined) { s = ++KG.nextSerial; KG.serialOf.set(b, s); } return s; },
    pendingDestroy: [],
    error: null,         // sticky {code, message}
    checkFlags: -1,      // the device-check flag buffer (kg_set_check_flags; wgpu/runtime.hpp)
    // The ops of its word-0 bits (wgpu::DeviceCheck), as the JS methods name them.
    checkNames: ['select', 'selectAssign', 'gather', 'scatter', 'oneHot'],
    lost: false,
    n: { dispatches: 0, submits: 0, bindGroups: 0, bindGroupHits: 0, buffersCreated: 0, pooledReuse: 0, reads: 0, pipelines: 0 },

    put: function(o) {
      o['g'] = KG.gen;  // the error-scope window the buffer was made in
      var id = KG.freeIds.length ? KG.freeIds.pop() : KG.objs.length;
      KG.objs[id] = o;
      return id;
    },
    setError: function(code, message) {
      if (!KG.error) KG.error = { code: code, message: message };
    },
    openBatch: function() {
      if (KG.enc) return;
      if (!KG.inScope) {
        KG.dev['pushErrorScope']('out-of-memory');
        KG.dev['pushErrorScope']('validation');
        KG.inScope = true;
      }
      KG.enc = KG.dev['createCommandEncoder']();
    },
    flush: function() {
      if (!KG.enc) return;
      if (KG.pass) { KG.pass['end'](); KG.pass = null; }
      if (KG.pused) KG.queue['writeBuffer'](KG.pbuf, 0, KG.pmirror, 0, KG.pused);
      KG.queue['submit']([KG.enc['finish']()]);
      KG.n.submits++;
      KG.enc = null;
      KG.pused = 0;
      for (var i = 0; i < KG.pendingDestroy.length; i++) KG.pendingDestroy[i]['destroy']();
      KG.pendingDestroy.length = 0;
    },
    // The error scopes span every batch between two reads: a push/pop pair costs ~80-170 us
    // on Chromium (measured: bench rawJs), far more than a submit, so it is paid per read
    // (per training step or per N steps), not per submit.
    closeScope: function() {
      if (KG.inScope) {
        KG.inScope = false;
        var gen = KG.gen++;
        var v = KG.dev['popErrorScope'](), o = KG.dev['popErrorScope']();
        KG.scopes.push(Promise.all([v, o]).then(function(e) {
          // An allocation that failed leaves an invalid buffer, and every later use of it in the
          // window is a validation error: the out-of-memory error is the one to report. A watched
          // allocation (KG.watch) marks its own buffer bad, which kg_dispatch then refuses.
          if (e[1] || KG.oomGen[gen]) {
            KG.setError('OutOfMemory', 'WebGPU out of memory: ' + (e[1] ? KG.line(e[1]['message']) : 'an allocation failed'));
          } else if (e[0]) {
            KG.setError('Device', 'WebGPU validation error: ' + e[0]['message']);
          }
        }, function(ex) { KG.setError('Device', 'popErrorScope failed: ' + ex['message']); }));
      }
    },
    read: async function(id, bytes) {
      KG.n.reads++;
      if (KG.error) throw KG.fail();
      var src = KG.objs[id];
      if (src['pending']) KG.flush();  // (as kg_dispatch: the copy in a command buffer of its own)
      // The device-check flags ride along (a 16-byte staging buffer of their own, so a read of
      // a maxBufferSize tensor stays possible) and are cleared in the same submission, so a bad
      // value found by any op recorded before this read is reported once.
      var flags = KG.checkFlags >= 0 ? KG.objs[KG.checkFlags] : null;
      var usage = GPUBufferUsage['MAP_READ'] | GPUBufferUsage['COPY_DST'];
      var staging = KG.dev['createBuffer']({ 'size': bytes, 'usage': usage });
      var fstage = flags ? KG.dev['createBuffer']({ 'size': 16, 'usage': usage }) : null;
      KG.openBatch();
      if (KG.pass) { KG.pass['end'](); KG.pass = null; }
      KG.enc['copyBufferToBuffer'](src['b'], 0, staging, 0, bytes);
      if (flags) {
        KG.enc['copyBufferToBuffer'](flags['b'], 0, fstage, 0, 16);
        KG.enc['clearBuffer'](flags['b'], 0, 16);
      }
      KG.flush();
      KG.closeScope();
      var scopes = KG.scopes.splice(0);
      try {
        await Promise.all(scopes);
        if (KG.error) throw KG.fail();
        if (src['bad']) throw KG.err('OutOfMemory', 'WebGPU out of memory: this tensor\'s buffer (' + src['size'] + ' bytes) could not be allocated');
        await staging['mapAsync'](GPUMapMode['READ']);
        if (fstage) await fstage['mapAsync'](GPUMapMode['READ']);
      } catch (e) {
        staging['destroy']();
        if (fstage) fstage['destroy']();
        if (e && e['name'] === 'KilnError') throw e;
        // mapAsync rejects (AbortError / OperationError) when the device is lost meanwhile
        await Promise.all(KG.scopes.splice(0));
        throw KG.err('Device', 'WebGPU read failed: ' + (e && e['message']));
      }
      var out = staging['getMappedRange']()['slice'](0);
      staging['unmap']();
      staging['destroy']();
      if (fstage) {
        var w = new Uint32Array(fstage['getMappedRange']()['slice'](0));
        fstage['unmap']();
        fstage['destroy']();
        if (w[0] !== 0) throw KG.checkError(w);
      }
      return out;
    },
    // The KilnError `Index` of set device-check flags (words: ops, value bits, size, mode).
    checkError: function(w) {
      var ops = [];
      for (var i = 0; i < KG.checkNames.length; i++) if (w[0] & (1 << i)) ops.push(KG.checkNames[i]);
      var value = w[3] === 2 ? new Float32Array(new Uint32Array([w[1]]).buffer)[0] : (w[1] | 0);
      var want = w[3] === 2 ? 'a whole number in [0, ' + w[2] + ')' : w[3] === 1 ? 'in [-' + w[2] + ', ' + w[2] + ')' : 'in [0, ' + w[2] + ')';
      var got = 'got ' + value + ', expected ' + want;
      var tail = '. It is reported by the first read after the op (the GPU runs asynchronously), also when another op ran it ' +
        '(crossEntropy\'s targets, a gradient); the op used 0 for it (its output holds wrong values), and a training step ' +
        'that used it was not applied';
      var x = new Error((ops.length > 1
        ? ops.join(', ') + ': indices computed on the GPU are out of range (one of them: ' + got + ')'
        : ops[0] + ': an index computed on the GPU is out of range: ' + got) + tail);
      x['name'] = 'KilnError';
      x['code'] = 'Index';
      return x;
    },
    idle: async function() {
      KG.flush();
      KG.closeScope();
      await KG.queue['onSubmittedWorkDone']();
      await Promise.all(KG.scopes.splice(0));
      if (KG.error) throw KG.err();
    },
    err: function(code, message) {
      var e = KG.error || { code: code, message: message };
      var x = new Error(e.message);
      x['name'] = 'KilnError';
      x['code'] = e.code;
      return x;
    },
    // The error a read reports. An out-of-memory error is reported once and cleared (the pool
    // of released buffers is freed), so the program may go on with smaller tensors; a
    // validation error (an engine bug) or a lost device stays: every later op reports it.
    fail: function() {
      var x = KG.err();
      if (x['code'] === 'OutOfMemory' && !KG.lost) {
        KG.error = null;
        KG.bgCache.clear();
        for (var k in KG.pool) { KG.pendingDestroy.push.apply(KG.pendingDestroy, KG.pool[k]); }
        KG.pool = {};
      }
      return x;
    },
    // The first line of a WebGPU message (Dawn appends its call stack).
    line: function(m) { return String(m).split('\n')[0]; },
    // Creates a buffer of `bytes` bytes with `desc`; from KG.BIG bytes up inside an out-of-memory
    // scope of its own, whose result marks the returned object bad (and the window's error as
    // out of memory) when the allocation failed. Reads await it (KG.scopes).
    create: function(desc, bytes) {
      var big = bytes >= KG.BIG;
      if (big) KG.dev['pushErrorScope']('out-of-memory');
      var o = { 'size': bytes };
      if (big) o['pending'] = 1;
      try {
        o['b'] = KG.dev['createBuffer'](desc);
      } finally {
        if (big) {
          var gen = KG.gen;
          KG.scopes.push(KG.dev['popErrorScope']().then(function(e) {
            o['pending'] = 0;
            // (A buffer released before any dispatch used it failed harmlessly: nothing to report.)
            if (e && (o['used'] || !o['released'])) {
              o['bad'] = 1;
              KG.oomGen[gen] = true;
              KG.setError('OutOfMemory', 'WebGPU out of memory: a buffer of ' + bytes + ' bytes could not be allocated (' + KG.line(e['message']) + ')');
            }
          }, function() {}));
        }
      }
      return o;
    },
    // Quoted keys: Closure ADVANCED renames KG.n's fields in the shipped engine.
    stats: function() {
      var n = KG.n;
      return { 'dispatches': n.dispatches, 'submits': n.submits, 'reads': n.reads, 'bindGroups': n.bindGroups,
               'bindGroupHits': n.bindGroupHits, 'buffersCreated': n.buffersCreated, 'pooledReuse': n.pooledReuse,
               'pipelines': n.pipelines };
    },
  },

  kg_init__deps: ['$KG'],
  kg_init: function() {
    var dev = Module['kilnGpuDevice'];
    if (!dev) return 0;
    KG.dev = dev;
    KG.queue = dev['queue'];
    KG.pmirror = new ArrayBuffer(KG.PSLOT * KG.PSLOTS);
    KG.bgCache = new Map();
    KG.serialOf = new WeakMap();
    KG.dyn = new Uint32Array(1);
    KG.pbuf = dev['createBuffer']({ 'size': KG.PSLOT * KG.PSLOTS, 'usage': GPUBufferUsage['UNIFORM'] | GPUBufferUsage['COPY_DST'] });
    dev['lost'].then(function(info) {
      KG.lost = true;
      KG.setError('Device', 'WebGPU device lost (' + info['reason'] + '): ' + info['message']);
    });
    dev.addEventListener('uncapturederror', function(ev) {
      ev.preventDefault();   // no console noise: it becomes the sticky error
      KG.setError(ev['error'] instanceof GPUOutOfMemoryError ? 'OutOfMemory' : 'Device', 'WebGPU error: ' + ev['error']['message']);
    });
    return 1;
  },

  // A storage buffer of `bytes` bytes (a double: the caller may ask for more than 4 GiB),
  // from the pool when one of that size was released. Returns 0 on a synchronous failure.
  kg_buffer__deps: ['$KG'],
  kg_buffer: function(bytes) {
    var p = KG.pool[bytes];
    if (p && p.length) { KG.n.pooledReuse++; return KG.put({ 'b': p.pop(), 'size': bytes }); }
    KG.openBatch();   // creation errors land in the batch's error scopes
    var o;
    try {
      o = KG.create({ 'size': bytes, 'usage': GPUBufferUsage['STORAGE'] | GPUBufferUsage['COPY_SRC'] | GPUBufferUsage['COPY_DST'] }, bytes);
    } catch (e) {
      KG.setError('OutOfMemory', 'createBuffer(' + bytes + ') threw ' + e['name'] + ': ' + e['message']);
      return 0;
    }
    KG.n.buffersCreated++;
    return KG.put(o);
  },
  // A new buffer holding `bytes` bytes from the wasm heap: mappedAtCreation, so the data is
  // in place on the CPU timeline (a queue.writeBuffer into a pooled buffer could overwrite
  // it before earlier unsubmitted work that reads it has run).
  kg_upload__deps: ['$KG'],
  kg_upload: function(ptr, bytes) {
    KG.openBatch();
    var size = Math.max(4, (bytes + 3) & ~3);
    var o;
    try {
      o = KG.create({ 'size': size, 'mappedAtCreation': true,
        'usage': GPUBufferUsage['STORAGE'] | GPUBufferUsage['COPY_SRC'] | GPUBufferUsage['COPY_DST'] }, size);
      new Uint8Array(o['b']['getMappedRange']()).set(HEAPU8.subarray(ptr, ptr + bytes));
      o['b']['unmap']();
    } catch (e) {
      KG.setError('OutOfMemory', 'upload of ' + bytes + ' bytes threw ' + e['name'] + ': ' + e['message']);
      return 0;
    }
    KG.n.buffersCreated++;
    return KG.put(o);
  },
  kg_release__deps: ['$KG'],
  kg_release: function(id) {
    var o = KG.objs[id];
    KG.objs[id] = null;
    KG.freeIds.push(id);
    if (!o || !o['b']) return;
    o['released'] = 1;
    if (o['bad']) { KG.pendingDestroy.push(o['b']); return; }
    // Recycled for later kernels' outputs: GPU work is ordered, so a later dispatch writing
    // it runs after every recorded reader. Only kernel outputs take pooled buffers.
    (KG.pool[o['size']] = KG.pool[o['size']] || []).push(o['b']);
  },
  kg_trim__deps: ['$KG'],
  kg_trim: function() {
    KG.bgCache.clear();
    for (var k in KG.pool) { KG.pendingDestroy.push.apply(KG.pendingDestroy, KG.pool[k]); }
    KG.pool = {};
    if (!KG.enc) KG.flush();
  },
  // A compute pipeline from WGSL, layout 'auto'. Synchronous: a WGSL error shows up later
  // (the batch's validation scope / uncapturederror), never as an exception here.
  // nread read-only storage buffers, then nrw read-write ones, then (if params) the
  // parameter block as a uniform with a dynamic offset. Layouts are shared by signature, so
  // bind groups can be cached by (layout, buffers) whatever the parameter slot.
  kg_pipeline__deps: ['$KG'],
  kg_pipeline: function(src, nread, nrw, params) {
    KG.openBatch();
    var m = KG.dev['createShaderModule']({ 'code': UTF8ToString(src) });
    var sig = nread + ',' + nrw + ',' + params;
    var L = KG.layouts[sig];
    if (!L) {
      var entries = [];
      for (var i = 0; i < nread + nrw; i++) entries.push({ 'binding': i, 'visibility': GPUShaderStage['COMPUTE'], 'buffer': { 'type': i < nread ? 'read-only-storage' : 'storage' } });
      if (params) entries.push({ 'binding': nread + nrw, 'visibility': GPUShaderStage['COMPUTE'], 'buffer': { 'type': 'uniform', 'hasDynamicOffset': true } });
      var bgl = KG.dev['createBindGroupLayout']({ 'entries': entries });
      L = KG.layouts[sig] = { 'bgl': bgl, 'pl': KG.dev['createPipelineLayout']({ 'bindGroupLayouts': [bgl] }), 'id': ++KG.layoutSerial };
    }
    var p = KG.dev['createComputePipeline']({ 'layout': L['pl'], 'compute': { 'module': m, 'entryPoint': 'main' } });
    KG.n.pipelines++;
    return KG.put({ 'p': p, 'L': L });
  },
  // Records one dispatch: bindings 0..nbuf-1 are the buffers (handles at bufs), binding nbuf
  // the parameter block (pbytes <= 256 bytes at params), if pbytes > 0.
  kg_dispatch__deps: ['$KG'],
  // Returns 0, or 2 (nothing recorded) when a buffer could not be allocated (KG.watch).
  kg_dispatch: function(pipe, bufs, nbuf, params, pbytes, x, y, z) {
    for (var j = 0; j < nbuf; j++) { if (KG.objs[HEAPU32[(bufs >> 2) + j]]['bad']) return 2; }
    // A dispatch on a buffer whose allocation is not known to have succeeded goes into a
    // command buffer of its own: were the buffer invalid, the whole command buffer would be
    // dropped, and with it every other op recorded in it.
    var isolate = false;
    for (var j = 0; j < nbuf; j++) {
      var bo = KG.objs[HEAPU32[(bufs >> 2) + j]];
      bo['used'] = 1;
      if (bo['pending']) isolate = true;
    }
    if (isolate) KG.flush();
    if (pbytes && KG.pused + KG.PSLOT > KG.pmirror.byteLength) KG.flush();
    KG.openBatch();
    if (!KG.pass) KG.pass = KG.enc['beginComputePass']();
    var po = KG.objs[pipe];
    var L = po['L'];
    var key = L['id'] + ':', bs = [];
    for (var i = 0; i < nbuf; i++) { var b = KG.objs[HEAPU32[(bufs >> 2) + i]]['b']; bs.push(b); key += KG.serial(b) + ','; }
    var bg = KG.cacheBindGroups ? KG.bgCache.get(key) : undefined;
    if (bg) KG.n.bindGroupHits++;
    else {
      var entries = [];
      for (var i = 0; i < nbuf; i++) entries.push({ 'binding': i, 'resource': { 'buffer': bs[i] } });
      if (pbytes) entries.push({ 'binding': nbuf, 'resource': { 'buffer': KG.pbuf, 'offset': 0, 'size': KG.PSLOT } });
      bg = KG.dev['createBindGroup']({ 'layout': L['bgl'], 'entries': entries });
      KG.n.bindGroups++;
      if (KG.cacheBindGroups) {
        if (KG.bgCache.size > 4096) KG.bgCache.clear();
        KG.bgCache.set(key, bg);
      }
    }
    KG.pass['setPipeline'](po['p']);
    if (pbytes) {
      new Uint8Array(KG.pmirror, KG.pused, pbytes).set(HEAPU8.subarray(params, params + pbytes));
      KG.dyn[0] = KG.pused;
      KG.pass['setBindGroup'](0, bg, KG.dyn);
      KG.pused += KG.PSLOT;
    } else {
      KG.pass['setBindGroup'](0, bg);
    }
    KG.pass['dispatchWorkgroups'](x, y, z);
    KG.n.dispatches++;
    if (!KG.batching || isolate) KG.flush();
    return 0;
  },
  kg_flush__deps: ['$KG'],
  kg_flush: function() { KG.flush(); },
  kg_set_bind_group_cache__deps: ['$KG'],
  kg_set_bind_group_cache: function(on) { KG.cacheBindGroups = !!on; KG.bgCache.clear(); },
  kg_set_batching__deps: ['$KG'],
  kg_set_batching: function(on) { KG.batching = !!on; if (!on) KG.flush(); },
  // 0 ok, 1 Device, 2 OutOfMemory: the sticky error set by an earlier async report.
  kg_status__deps: ['$KG'],
  // An out-of-memory error is reported once: by this check or by a read, whichever comes first.
  kg_status: function() {
    if (!KG.error) return 0;
    KG.reported = KG.error;
    if (KG.error.code !== 'OutOfMemory') return 1;
    if (!KG.lost) KG.error = null;
    return 2;
  },
  kg_error_message__deps: ['$KG'],
  kg_error_message: function(buf, len) { var e = KG.error || KG.reported; stringToUTF8(e ? e.message : '', buf, len); },
  kg_set_check_flags__deps: ['$KG'],
  kg_set_check_flags: function(id) { KG.checkFlags = id; },
  kg_max_buffer_size__deps: ['$KG'],
  kg_max_buffer_size: function() { return KG.dev['limits']['maxBufferSize']; },
});
