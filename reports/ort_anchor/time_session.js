#!/usr/bin/env node
// time_session.js — one ONNX Runtime benchmark for reports/ort_anchor.py.
//
//     node reports/ort_anchor/time_session.js JOB.json
//
// JOB.json (written by ort_anchor.py):
//   model        the .onnx file
//   threads      intra-op threads (inter-op: 1, sequential execution)
//   inputs       [{name, type: "float32" | "int32", dims, file}]: raw little-endian data
//   outputs      [{name, type, dims, file?, alias?}]: every output is preallocated
//                once and passed as a fetch, so ORT writes into it (no allocation or
//                copy per call); `alias` names an input whose buffer the output shares
//                (GroupQueryAttention's past/present KV cache: updated in place);
//                in mode "run", outputs with `file` are written there
//   mode         "time" (the default) or "run" (`runs` calls, then the outputs written)
//   min_time, repetitions, max_call_time, memory   as ort_anchor.py's options
//   optimized_model   optional: where ORT saves the graph it optimized (to check fusions)
//
// Prints one JSON object on stdout: status "ok" | "skipped" | "error", and for
// "time" per repetition the wall time (process.hrtime) and the CPU time of all
// the process's threads (process.cpuUsage: user + system) per call, in seconds.
// The calls are `await session.run(feeds, fetches)`, the public API: its per-call
// overhead (argument checks, a setImmediate turn) is part of ONNX Runtime's cost.
'use strict';

const fs = require('fs');

const TYPED = { float32: Float32Array, int32: Int32Array, int64: BigInt64Array };

function readTensorData(type, file, count) {
  const buf = fs.readFileSync(file);
  const Typed = TYPED[type];
  if (!Typed) throw new Error(`unsupported tensor type ${type}`);
  if (buf.length !== count * Typed.BYTES_PER_ELEMENT) {
    throw new Error(`${file}: ${buf.length} bytes, expected ${count * Typed.BYTES_PER_ELEMENT}`);
  }
  // A copy: Buffer's pool does not guarantee the element alignment.
  return new Typed(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.length));
}

function countOf(dims) {
  return dims.reduce((a, b) => a * b, 1);
}

// "0-2,5" → [0, 1, 2, 5]
function cpuList(text) {
  const cpus = [];
  for (const part of text.split(',')) {
    const [a, b] = part.split('-').map(Number);
    for (let c = a; c <= (b === undefined ? a : b); c++) cpus.push(c);
  }
  return cpus;
}

function procStatus(field) {
  const m = fs.readFileSync('/proc/self/status', 'utf8').match(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm'));
  return m ? Number(m[1]) * 1024 : -1;
}

async function main() {
  const job = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  let ort;
  try {
    ort = require('onnxruntime-node');
  } catch (e) {
    return { status: 'error', error: `cannot load onnxruntime-node (npm ci --prefix reports/ort_anchor): ${e.message}` };
  }
  const res = {
    status: 'error',
    error: '',
    ort_version: ort.env.versions.node || ort.env.versions.common,
    node_version: process.versions.node,
  };
  const options = {
    executionProviders: ['cpu'],
    intraOpNumThreads: job.threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
    enableCpuMemArena: true,
    enableMemPattern: true,
    logSeverityLevel: 3,
  };
  if (job.optimized_model) options.optimizedModelFilePath = job.optimized_model;

  const feeds = {};
  const byName = {};
  for (const t of job.inputs) {
    const data = readTensorData(t.type, t.file, countOf(t.dims));
    byName[t.name] = data;
    feeds[t.name] = new ort.Tensor(t.type, data, t.dims);
  }
  const fetches = {};
  const outData = {};
  for (const t of job.outputs) {
    const Typed = TYPED[t.type];
    const data = t.alias ? byName[t.alias] : new Typed(countOf(t.dims));
    outData[t.name] = data;
    fetches[t.name] = new ort.Tensor(t.type, data, t.dims);
  }

  let session;
  try {
    session = await ort.InferenceSession.create(job.model, options);
  } catch (e) {
    res.error = `session: ${e.message}`.split('\n')[0].slice(0, 300);
    return res;
  }
  const call = () => session.run(feeds, fetches);

  async function timeCalls(n) {
    const c0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) await call();
    const t1 = process.hrtime.bigint();
    const c = process.cpuUsage(c0);
    return [Number(t1 - t0) / 1e9, (c.user + c.system) / 1e6];
  }

  try {
    if (job.mode === 'run') {
      for (let i = 0; i < (job.runs || 1); i++) await call();
      for (const t of job.outputs) {
        if (t.file) {
          const d = outData[t.name];
          fs.writeFileSync(t.file, Buffer.from(d.buffer, d.byteOffset, d.byteLength));
        }
      }
      res.status = 'ok';
      return res;
    }

    // Warm-up: the first call grows ORT's arena and faults its pages in. With
    // --memory, what it adds to the peak RSS (the arena keeps its memory, so a
    // later call would add nothing): the call's working memory, plus one-time
    // costs of a first run (thread stacks, JIT code), a MiB or two.
    let before = -1;
    if (job.memory) {
      try {
        fs.writeFileSync('/proc/self/clear_refs', '5');  // peak RSS := current RSS
        before = procStatus('VmRSS');
      } catch (e) {
        res.memory_note = `cannot reset the peak RSS (/proc/self/clear_refs: ${e.code})`;
      }
    }
    const [first] = await timeCalls(1);
    res.warmup = first;
    if (job.memory && before >= 0) {
      const peak = procStatus('VmHWM');
      if (peak >= before) res.extra_rss = peak - before;
      else res.memory_note = 'RSS not readable';
    }
    if (job.max_call_time > 0 && first > job.max_call_time) {
      res.status = 'skipped';
      return res;
    }
    // Calibrate (harness/measure/bench.c): grow the count until one batch lasts min_time.
    let iters = 1;
    for (;;) {
      const [t] = await timeCalls(iters);
      if (t >= job.min_time || iters >= 1e9) break;
      const grow = t > 0 ? Math.min((1.2 * job.min_time) / t, 10) : 10;
      iters = Math.max(Math.ceil(iters * grow), iters + 1);
    }
    res.real = [];
    res.cpu = [];
    for (let r = 0; r < job.repetitions; r++) {
      const [t, c] = await timeCalls(iters);
      res.real.push(t / iters);
      res.cpu.push(c / iters);
    }
    res.iterations = iters;
    res.os_threads = fs.readdirSync('/proc/self/task').length;
    res.cpus_allowed = cpuList(fs.readFileSync('/proc/self/status', 'utf8').match(/^Cpus_allowed_list:\s*(\S+)/m)[1]);
    res.status = 'ok';
  } catch (e) {
    res.error = `${e.name || 'Error'}: ${e.message}`.split('\n')[0].slice(0, 300);
  } finally {
    await session.release();
  }
  return res;
}

main().then(
  (res) => process.stdout.write(JSON.stringify(res) + '\n'),
  (e) => {
    process.stdout.write(JSON.stringify({ status: 'error', error: String(e.message || e).slice(0, 300) }) + '\n');
    process.exitCode = 1;
  },
);
