#!/usr/bin/env node
// ort_run.js MODEL.onnx [--level disabled|basic|extended|all] [--runs N] [--seed S | --inputs DIR]
//            [--save-inputs DIR] [--save-outputs DIR] [--compare DIR [--tolerance T]]
//            [--against OTHER.onnx [--pairs P]] [--profile N] [--json]
// Runs an ONNX model on ONNX Runtime's CPU execution provider. Inputs are random in [-1, 1]
// from a seed (the same seed gives the same inputs to every model with the same input
// names and shapes) or read from DIR. Tensors on disk: DIR/manifest.json lists each
// tensor's name, shape and file; the file holds little-endian float32 values (of any
// tensor type: an input is fed as its own type, integers rounded).
// With --runs N it prints the median of N timed runs (after two warm-up runs); with
// --against OTHER.onnx too, OTHER (same inputs) is timed in turn with MODEL, so that a
// change in the machine's speed weighs on both alike; --pairs P times P pairs of sessions
// made in both orders (geometric mean of the medians). With
// --compare DIR it fails (exit 1) when an output differs from DIR's by more than the
// tolerance, relative to the largest magnitude among DIR's outputs. With --profile N it
// runs N more times under ONNX Runtime's profiler and prints the time per operator type,
// with the products' rate in GFLOP/s.
'use strict';
const fs = require('fs');
const path = require('path');
const {profileByOperator} = require('./ort_profile');
const {toHalfBits, numericValues} = require('./tensor_values');

function fail(message, code = 2) {
  process.stderr.write(`ort_run: error: ${message}\n`);
  process.exit(code);
}

function parseArgs(argv) {
  const opts = {level: 'all', runs: 0, pairs: 1, profile: 0, seed: 1, tolerance: 1e-3, json: false};
  const valued = new Set(['--level', '--runs', '--seed', '--inputs', '--save-inputs', '--save-outputs', '--compare',
                          '--tolerance', '--against', '--pairs', '--profile']);
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    if (a === '--json') { opts.json = true; continue; }
    if (valued.has(a)) {
      if (i + 1 >= argv.length) fail(`${a} needs a value`);
      opts[a.slice(2).replace('-', '_')] = argv[++i];
      continue;
    }
    if (a.startsWith('--')) fail(`unknown flag ${a}`);
    if (opts.model) fail('expected one model');
    opts.model = a;
  }
  if (!opts.model) fail('usage: ort_run.js MODEL.onnx [--level L] [--runs N] [--seed S | --inputs DIR] ...');
  if (!['disabled', 'basic', 'extended', 'all'].includes(opts.level))
    fail(`unknown --level '${opts.level}' (disabled, basic, extended, all)`);
  opts.runs = Number(opts.runs);
  opts.tolerance = Number(opts.tolerance);
  opts.profile = Number(opts.profile);
  opts.pairs = Number(opts.pairs);
  if (!Number.isInteger(opts.runs) || opts.runs < 0) fail('--runs must be a whole number');
  if (!Number.isInteger(opts.profile) || opts.profile < 0) fail('--profile must be a whole number');
  if (!Number.isInteger(opts.pairs) || opts.pairs < 1) fail('--pairs must be a positive whole number');
  return opts;
}

// mulberry32: a small deterministic generator, so inputs depend only on the seed.
function generator(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6D2B79F5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function sessionOptions(level) {
  // Worker threads that spin after a run steal the cores from the other session timed in
  // turn (--against): with spinning, a ResNeXt-50 run took 74.7 ms in turn and 42.7 ms
  // alone. Without it, the two agree.
  const noSpinning = {intra_op: {allow_spinning: '0'}, inter_op: {allow_spinning: '0'}};
  return {graphOptimizationLevel: level, executionProviders: ['cpu'], extra: {session: noSpinning}};
}

async function load(ort, model, level) {
  if (!fs.existsSync(model)) fail(`cannot read ${model}`);
  try {
    return await ort.InferenceSession.create(model, sessionOptions(level));
  } catch (e) {
    fail(`ONNX Runtime cannot load ${model}: ${e.message.split('\n')[0]}`);
  }
}

// Float32 values `data` as a tensor of `type` (an input's), integers rounded.
function tensorOf(ort, type, data, shape) {
  const make = {
    float16: () => Uint16Array.from(data, toHalfBits),
    float64: () => Float64Array.from(data),
    int64: () => BigInt64Array.from(data, x => BigInt(Math.round(x))),
    int32: () => Int32Array.from(data, Math.round),
    int16: () => Int16Array.from(data, Math.round),
    int8: () => Int8Array.from(data, Math.round),
    uint8: () => Uint8Array.from(data, Math.round),
    uint16: () => Uint16Array.from(data, Math.round),
    uint32: () => Uint32Array.from(data, Math.round),
    uint64: () => BigUint64Array.from(data, x => BigInt(Math.round(x))),
    bool: () => Uint8Array.from(data, x => (x ? 1 : 0)),
  }[type];
  return make ? new ort.Tensor(type, make(), shape) : new ort.Tensor('float32', data, shape);
}

// Tensors from DIR (float32 files); each fed to an input of `session` as that input's
// type (float32 where there is no such input: outputs read back to compare).
function readTensors(ort, dir, session) {
  const manifestPath = path.join(dir, 'manifest.json');
  if (!fs.existsSync(manifestPath)) fail(`no tensors in ${dir} (manifest.json missing)`);
  const types = new Map((session ? session.inputMetadata : []).map(meta => [meta.name, meta.type]));
  const out = {};
  for (const t of JSON.parse(fs.readFileSync(manifestPath, 'utf8'))) {
    const bytes = fs.readFileSync(path.join(dir, t.file));
    const data = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
    if (data.length !== t.shape.reduce((x, y) => x * y, 1)) fail(`${t.file}: size does not match shape ${t.shape}`);
    out[t.name] = tensorOf(ort, types.get(t.name) || 'float32', data, t.shape);
  }
  return out;
}

// Tensors as float32 files (their values, whatever their type) and DIR/manifest.json.
function writeTensors(dir, tensors) {
  fs.mkdirSync(dir, {recursive: true});
  const manifest = [];
  Object.keys(tensors).sort().forEach((name, i) => {
    const t = tensors[name];
    const file = `t${i}.bin`;
    const data = Float32Array.from(numericValues(t));
    fs.writeFileSync(path.join(dir, file), Buffer.from(data.buffer, data.byteOffset, data.byteLength));
    manifest.push({name, shape: Array.from(t.dims), file});
  });
  fs.writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify(manifest, null, 1));
}

function randomInputs(ort, session, seed) {
  const next = generator(seed);
  const feeds = {};
  for (const meta of session.inputMetadata) {
    if (meta.shape.some(d => typeof d !== 'number')) fail(`input ${meta.name} has a symbolic shape ${meta.shape}`);
    feeds[meta.name] = randomTensor(ort, meta, next);
  }
  return feeds;
}

// Floats in [-1, 1] (float16 the nearest halves); int64 and int32 (token ids, indices) in
// [0, 4), valid for any table of at least 4 rows; bool either way.
function randomTensor(ort, meta, next) {
  const n = meta.shape.reduce((x, y) => x * y, 1);
  const float = () => next() * 2 - 1, index = () => Math.floor(next() * 4);
  const make = {
    float32: () => Float32Array.from({length: n}, float),
    float64: () => Float64Array.from({length: n}, float),
    float16: () => Uint16Array.from({length: n}, () => toHalfBits(float())),
    int64: () => BigInt64Array.from({length: n}, () => BigInt(index())),
    int32: () => Int32Array.from({length: n}, index),
    bool: () => Uint8Array.from({length: n}, () => (next() < 0.5 ? 1 : 0)),
  }[meta.type];
  if (!make) fail(`input ${meta.name} is ${meta.type}; only float, int64, int32 and bool inputs can be generated`);
  return new ort.Tensor(meta.type, make(), meta.shape);
}

// The largest difference between two output sets, or Infinity when names or shapes differ.
function maxDifference(expected, got) {
  let worst = 0, scale = 1;
  const names = Object.keys(expected);
  if (names.length !== Object.keys(got).length) return {diff: Infinity, scale};
  for (const name of names) {
    if (!got[name] || expected[name].dims.join() !== got[name].dims.join()) return {diff: Infinity, scale};
    const a = numericValues(expected[name]), b = numericValues(got[name]);
    for (let i = 0; i < a.length; ++i) {
      scale = Math.max(scale, Math.abs(a[i]));
      const d = Math.abs(a[i] - b[i]);
      if (!(d <= worst)) worst = Number.isNaN(d) ? Infinity : d;
    }
  }
  return {diff: worst, scale};
}

const median = t => [...t].sort((x, y) => x - y)[Math.floor(t.length / 2)];

// Each session's run times, in ms: two warm-up runs each, then `rounds` rounds in turn, in
// the other order every other round (the one run second runs faster).
async function timeInTurn(sessions, feeds, rounds) {
  for (let i = 0; i < 2; ++i)
    for (const s of sessions) await s.run(feeds);
  const times = sessions.map(() => []);
  for (let i = 0; i < rounds; ++i) {
    for (let j = 0; j < sessions.length; ++j) {
      const k = i % 2 ? sessions.length - 1 - j : j;
      const start = process.hrtime.bigint();
      await sessions[k].run(feeds);
      times[k].push(Number(process.hrtime.bigint() - start) / 1e6);
    }
  }
  return times;
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  let ort;
  try {
    ort = require('./load_ort').loadOrt();
  } catch (e) {
    fail(`onnxruntime-node is not installed (run scripts/setup.sh): ${e.message}`);
  }
  const session = await load(ort, opts.model, opts.level);
  const other = opts.against ? await load(ort, opts.against, opts.level) : null;
  const feeds = opts.inputs ? readTensors(ort, opts.inputs, session) : randomInputs(ort, session, Number(opts.seed));
  if (opts.save_inputs) writeTensors(opts.save_inputs, feeds);
  const outputs = await session.run(feeds);
  if (opts.save_outputs) writeTensors(opts.save_outputs, outputs);

  const summary = {model: opts.model, level: opts.level};
  if (opts.runs > 0) {
    // With --against and --pairs P, P pairs of sessions, made in both orders in turn, each
    // timed for about runs / P rounds; the times are geometric means over pairs of the
    // medians (the first session made can run faster than the second, as our executors do).
    const pairs = other ? opts.pairs : 1;
    const rounds = pairs > 1 ? Math.max(5, Math.ceil(opts.runs / pairs)) : opts.runs;
    const logs = [0, 0];
    for (let p = 0; p < pairs; ++p) {
      let sessions = other ? [session, other] : [session];
      if (p > 0) {
        const first = await load(ort, p % 2 ? opts.against : opts.model, opts.level);
        const second = await load(ort, p % 2 ? opts.model : opts.against, opts.level);
        sessions = p % 2 ? [second, first] : [first, second];
      }
      const times = await timeInTurn(sessions, feeds, rounds);
      times.forEach((t, k) => { logs[k] += Math.log(median(t)); });
    }
    summary.runs = rounds * pairs;
    summary.median_ms = Math.exp(logs[0] / pairs);
    if (other) {
      summary.against = opts.against;
      summary.against_median_ms = Math.exp(logs[1] / pairs);
      summary.pairs = pairs;
    }
  }
  if (opts.profile > 0)
    summary.profile = await profileByOperator(ort, opts.model, sessionOptions(opts.level), feeds, opts.profile);
  let same = true;
  if (opts.compare) {
    const {diff, scale} = maxDifference(readTensors(ort, opts.compare, null), outputs);
    summary.max_abs_difference = diff;
    same = diff <= opts.tolerance * scale;
    summary.same = same;
  }
  if (opts.json) {
    console.log(JSON.stringify(summary));
  } else {
    console.log(`${opts.model}: ONNX Runtime ${ort.env.versions ? ort.env.versions.common : ''}, level ${opts.level}`);
    if (summary.median_ms !== undefined) console.log(`median ${summary.median_ms.toFixed(3)} ms over ${summary.runs} runs`);
    if (summary.against_median_ms !== undefined)
      console.log(`${opts.against}: median ${summary.against_median_ms.toFixed(3)} ms over ${summary.runs} runs, in turn` +
                  (summary.pairs > 1 ? ` (geometric mean over ${summary.pairs} session pairs)` : ''));
    if (summary.profile) {
      console.log(`time per operator type (mean of ${opts.profile} runs; products' rate in GFLOP/s):`);
      for (const r of summary.profile)
        console.log(`  ${r.op.padEnd(22)} ${String(r.nodes).padStart(5)} nodes ${r.ms.toFixed(3).padStart(9)} ms ` +
                    `${(100 * r.share).toFixed(1).padStart(5)}%${r.gflops === null ? '' : `  ${r.gflops.toFixed(1)} GFLOP/s`}`);
    }
    if (opts.compare)
      console.log(`outputs against ${opts.compare}: max |difference| ${summary.max_abs_difference} (${same ? 'same' : 'DIFFERENT'})`);
  }
  process.exit(same ? 0 : 1);
}

main().catch(e => fail(e.message));
