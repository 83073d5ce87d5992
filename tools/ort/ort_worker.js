#!/usr/bin/env node
// ort_worker.js: ONNX Runtime for taso-opt, as a long-lived process (src/backends/ort_worker.cc
// starts it once per run). It reads one JSON request a line on stdin and writes one JSON
// reply a line on stdout, in order; a reply with "error" reports a failed request, and
// the worker goes on. Requests:
//   {"op": "hello"}                          -> {"version": "1.30.0"}
//   {"op": "load", "model": PATH, "threads": T}   -> {"session": ID}
//   {"op": "run", "session": ID, "burst_ms": B}  -> {"ms": the median run's time}: runs back to
//          back until B ms have passed (once without B; at most 10000 runs), as the
//          operators of a model run one after another, their threads awake and their
//          data in cache; the first run, after the wait for the request, is not counted.
//   {"op": "release", "session": ID}         -> {}
//   {"op": "outputs", "model": PATH, "shapes": {INPUT: [dims]}, "scales": [S...], "seed": N,
//    "dir": DIR, "threads": T}
//       -> {"outputs": K, "name_I": ..., "shape_I": [dims]} for I < K: the model run once per
//          scale on inputs that depend only on (seed, input name, scale): float inputs
//          uniform in [-S, S] (float16 ones rounded to it), others zero; symbolic dimensions
//          as "shapes" gives them. Output I of the run at scale index J is written to
//          DIR/sJ_oI.bin as float32.
//   {"op": "compare", "model": A, "against": B, "threads": T, "pairs": P, "rounds": R,
//    "shapes": {INPUT: [dims]} (optional: sizes for symbolic dimensions, as for "outputs"),
//    "apart": true (optional: one session loaded at a time)}
//       -> {"a_ms": [P medians], "b_ms": [P medians]}: P pairs of sessions, made in both
//          orders in turn, each timed for R rounds in turn (two warm-up runs each; the
//          process's first pair half a second, warmUp); apart, each session of a pair
//          made, timed for R rounds and released before the other is made.
// Sessions run on the CPU execution provider at the highest graph-optimization level.
// Inputs are fixed per session: float inputs from a seeded generator, others zero.
'use strict';
const readline = require('readline');
const {toHalfBits, numericValues} = require('./tensor_values');

let ort;
let loadError = null;
try {
  ort = require('./load_ort').loadOrt();
  ort.env.logLevel = 'error';
} catch (e) {
  loadError = `onnxruntime-node cannot be loaded (run scripts/setup.sh): ${e.message.split('\n')[0]}`;
}

const sessions = new Map();  // id -> {session, feeds}
let nextId = 1;

function generator(seed) {  // mulberry32
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6D2B79F5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const kArrays = {
  float32: Float32Array, float64: Float64Array, float16: Uint16Array, int64: BigInt64Array, int32: Int32Array,
  int8: Int8Array, uint8: Uint8Array, bool: Uint8Array,
};
const kFloatTypes = new Set(['float32', 'float64', 'float16']);

// A 32-bit hash of a string (FNV-1a), to give each input its own stream of values.
function hashName(name) {
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; ++i) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

// Inputs for a session: float inputs uniform in [-scale, scale], others zero, the same for
// any model with an input of that name and shape; symbolic dimensions as `shapes` gives.
function makeFeeds(session, shapes, seed, scale) {
  const feeds = {};
  for (const meta of session.inputMetadata) {
    const given = shapes && shapes[meta.name];
    const shape = Array.isArray(given) ? given : meta.shape;
    if (shape.some(d => typeof d !== 'number')) throw new Error(`input ${meta.name} has a symbolic shape`);
    const Array_ = kArrays[meta.type];
    if (!Array_) throw new Error(`input ${meta.name} has type ${meta.type}, which the worker cannot feed`);
    const data = new Array_(shape.reduce((x, y) => x * y, 1));
    if (kFloatTypes.has(meta.type)) {
      const next = generator((seed ^ hashName(meta.name)) >>> 0);
      const store = meta.type === 'float16' ? toHalfBits : x => x;
      for (let i = 0; i < data.length; ++i) data[i] = store((next() * 2 - 1) * scale);
    }
    feeds[meta.name] = new ort.Tensor(meta.type, data, shape);
  }
  return feeds;
}

function asFloat32(tensor, name) {
  if (tensor.type === 'float32') return tensor.data;
  if (!kArrays[tensor.type]) throw new Error(`output ${name} has type ${tensor.type}, which cannot be compared`);
  return Float32Array.from(numericValues(tensor));
}

async function outputs(req) {
  const fs = require('fs'), path = require('path');
  const session = await ort.InferenceSession.create(req.model, sessionOptions(req.threads | 0));
  const reply = {outputs: session.outputNames.length};
  try {
    const scales = Array.isArray(req.scales) ? req.scales : [1];
    for (let j = 0; j < scales.length; ++j) {
      const results = await session.run(makeFeeds(session, req.shapes, req.seed >>> 0, scales[j]));
      session.outputNames.forEach((name, i) => {
        const t = results[name];
        reply[`name_${i}`] = name;
        reply[`shape_${i}`] = t.dims;
        const data = asFloat32(t, name);
        fs.writeFileSync(path.join(req.dir, `s${j}_o${i}.bin`), Buffer.from(data.buffer, data.byteOffset, data.byteLength));
      });
    }
  } finally {
    await session.release();
  }
  return reply;
}

function sessionOptions(threads) {
  // Spinning worker threads would steal the core of the session timed in turn.
  const noSpinning = {intra_op: {allow_spinning: '0'}, inter_op: {allow_spinning: '0'}};
  return {
    graphOptimizationLevel: 'all', executionProviders: ['cpu'], intraOpNumThreads: threads,
    interOpNumThreads: 1, extra: {session: noSpinning},
  };
}

async function load(model, threads, shapes) {
  if (typeof model !== 'string') throw new Error('"model" must be a path');
  const t = Number.isInteger(threads) && threads >= 0 ? threads : 1;
  const session = await ort.InferenceSession.create(model, sessionOptions(t));
  try {
    return {session, feeds: makeFeeds(session, shapes || null, 1, 1)};
  } catch (e) {
    await session.release();  // a large model's session holds gigabytes
    throw e;
  }
}

async function timedRun(s) {
  const start = process.hrtime.bigint();
  await s.session.run(s.feeds);
  return Number(process.hrtime.bigint() - start) / 1e6;
}

const median = t => [...t].sort((x, y) => x - y)[Math.floor(t.length / 2)];

async function burst(s, burstMs) {
  const budget = Number.isFinite(burstMs) && burstMs > 0 ? burstMs : 0;
  const first = await timedRun(s);
  if (budget === 0) return first;
  const times = [];
  for (let spent = first; times.length === 0 || (spent < budget && times.length < 10000);) {
    times.push(await timedRun(s));
    spent += times[times.length - 1];
  }
  return median(times);
}

// Two sessions timed in turn, the order swapped every round; their medians.
async function inTurn(first, second, rounds) {
  for (let i = 0; i < 2; ++i) { await timedRun(first); await timedRun(second); }
  const times = [[], []];
  for (let i = 0; i < rounds; ++i) {
    const order = i % 2 ? [1, 0] : [0, 1];
    for (const k of order) times[k].push(await timedRun(k === 0 ? first : second));
  }
  return [median(times[0]), median(times[1])];
}

// The first few hundred milliseconds of products in a process run several times slower
// (a 256x256 MatMul 1.0 ms for its first 150 to 250 runs, then 0.19 ms), and not alike
// for every kernel: the first pair a process times would compare two models in that
// phase. So the first pair's sessions run in turn, untimed, for half a second first.
let warmedUp = false;
async function warmUp(...loaded) {
  if (warmedUp) return;
  warmedUp = true;
  const start = process.hrtime.bigint();
  while (Number(process.hrtime.bigint() - start) < 500e6)
    for (const s of loaded) await s.session.run(s.feeds);
}

// The median of `rounds` runs of the model alone, its session made for them and released
// after (two warm-up runs first).
async function timedAlone(model, req, rounds) {
  const s = await load(model, req.threads, req.shapes);
  try {
    await warmUp(s);
    const times = [];
    for (let i = 0; i < rounds + 2; ++i) times.push(await timedRun(s));
    return median(times.slice(2));
  } finally {
    await s.session.release();
  }
}

async function compare(req) {
  const pairs = Math.max(1, req.pairs | 0), rounds = Math.max(1, req.rounds | 0);
  const a_ms = [], b_ms = [];
  for (let p = 0; req.apart && p < pairs; ++p) {
    const [first, second] = p % 2 ? [req.against, req.model] : [req.model, req.against];
    const times = [await timedAlone(first, req, rounds), await timedAlone(second, req, rounds)];
    a_ms.push(times[p % 2]);
    b_ms.push(times[1 - p % 2]);
  }
  for (let p = 0; !req.apart && p < pairs; ++p) {
    // Made in both orders in turn: the session made first can run faster.
    const made = [];
    try {
      for (const model of p % 2 ? [req.against, req.model] : [req.model, req.against])
        made.push(await load(model, req.threads, req.shapes));
      const [a, b] = p % 2 ? [made[1], made[0]] : made;
      await warmUp(a, b);
      const [ta, tb] = await inTurn(a, b, rounds);
      a_ms.push(ta);
      b_ms.push(tb);
    } finally {
      // Freed now rather than when the garbage collector comes (and where a run failed
      // too): a large model's sessions hold gigabytes.
      for (const s of made) await s.session.release();
    }
  }
  return {a_ms, b_ms};
}

function session(id) {
  const s = sessions.get(id);
  if (!s) throw new Error(`no session ${id}`);
  return s;
}

async function handle(req) {
  if (loadError) throw new Error(loadError);
  switch (req.op) {
    case 'hello':
      return {version: ort.env.versions ? ort.env.versions.common : 'unknown'};
    case 'load': {
      const id = nextId++;
      sessions.set(id, await load(req.model, req.threads));
      return {session: id};
    }
    case 'run':
      return {ms: await burst(session(req.session), req.burst_ms)};
    case 'release':
      await session(req.session).session.release();
      sessions.delete(req.session);
      return {};
    case 'compare':
      return compare(req);
    case 'outputs':
      return outputs(req);
    default:
      throw new Error(`unknown op ${JSON.stringify(req.op)}`);
  }
}

async function main() {
  const lines = readline.createInterface({input: process.stdin, terminal: false});
  for await (const line of lines) {
    if (!line.trim()) continue;
    let reply;
    try {
      reply = await handle(JSON.parse(line));
    } catch (e) {
      reply = {error: String(e.message || e).split('\n')[0]};
    }
    process.stdout.write(JSON.stringify(reply) + '\n');
  }
}

main();
