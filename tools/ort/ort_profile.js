// Where an ONNX Runtime run's time goes: ONNX Runtime's own profiler, summed per operator
// type, with the arithmetic rate of the products (Conv, FusedConv, MatMul, Gemm) so that
// one can see whether a model runs at the machine's peak (and a rewrite that keeps the
// FLOPs can gain nothing) or below it.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');

const numel = shape => shape.reduce((x, y) => x * y, 1);
const shapesOf = list => (list || []).map(t => Object.values(t)[0] || []);

// Multiply-adds times two, from the kernel's input and output shapes; 0 where the
// operator is not a product. A product's constant second input may be missing from the
// profile (ONNX Runtime packs it at load and lists no shape): MatMul and Gemm need only
// the first input's and the output's shapes.
function flops(op, inputs, outputs) {
  if (inputs.length < 1 || outputs.length < 1) return 0;
  const out = numel(outputs[0]);
  if ((op === 'Conv' || op === 'FusedConv') && inputs.length >= 2) {
    const w = inputs[1];  // [O, C / group, kernel...]: per output, numel(w) / O products
    return w.length >= 3 && w[0] > 0 ? 2 * out * numel(w) / w[0] : 0;
  }
  if (op === 'MatMul' || op === 'FusedMatMul') {
    const a = inputs[0];
    return a.length ? 2 * out * a[a.length - 1] : 0;
  }
  if (op === 'Gemm') {
    const a = inputs[0], m = outputs[0][0];
    return a.length === 2 && m > 0 ? 2 * out * numel(a) / m : 0;
  }
  return 0;
}

// Convolutions are told apart by grouping, as their rates differ by several times.
function rowName(op, inputs) {
  if ((op !== 'Conv' && op !== 'FusedConv') || inputs.length < 2 || inputs[0].length < 2 || inputs[1].length < 2)
    return op;
  const channels = inputs[0][1], perGroup = inputs[1][1];
  const kind = perGroup === channels ? 'dense' : perGroup === 1 ? 'depthwise' : 'grouped';
  return `${op} ${kind}`;
}

// Runs `session` `runs` times after two warm-ups, profiled, and returns one row per
// operator type, slowest first: {op, nodes, ms (mean per run), share, gflops (or null)}.
async function profileByOperator(ort, model, options, feeds, runs) {
  const prefix = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ort_profile_')), 'run');
  const session = await ort.InferenceSession.create(model, {...options, enableProfiling: true, profileFilePrefix: prefix});
  for (let i = 0; i < 2 + runs; ++i) await session.run(feeds);
  // onnxruntime-node's endProfiling returns no path: the profile is the one file in `dir`.
  session.endProfiling();
  const dir = path.dirname(prefix);
  const events = JSON.parse(fs.readFileSync(path.join(dir, fs.readdirSync(dir)[0]), 'utf8'));
  fs.rmSync(dir, {recursive: true, force: true});

  // The profile holds every run: keep the last `runs` model runs' nodes.
  const modelRuns = events.filter(e => e.name === 'model_run').sort((a, b) => a.ts - b.ts).slice(-runs);
  if (modelRuns.length === 0) throw new Error('the ONNX Runtime profile has no model run');
  const from = modelRuns[0].ts;
  const byOp = new Map();
  let total = 0;
  for (const e of events) {
    if (e.cat !== 'Node' || !e.name.endsWith('_kernel_time') || e.ts < from) continue;
    const op = e.args.op_name, inputs = shapesOf(e.args.input_type_shape);
    const name = rowName(op, inputs);
    const row = byOp.get(name) || {op: name, nodes: 0, us: 0, flops: 0};
    row.nodes += 1;
    row.us += e.dur;
    row.flops += flops(op, inputs, shapesOf(e.args.output_type_shape));
    byOp.set(name, row);
    total += e.dur;
  }
  return [...byOp.values()]
      .sort((a, b) => b.us - a.us)
      .map(r => ({
        op: r.op,
        nodes: r.nodes / modelRuns.length,
        ms: r.us / modelRuns.length / 1000,
        share: total > 0 ? r.us / total : 0,
        gflops: r.flops > 0 ? r.flops / (r.us * 1e3) : null,
      }));
}

module.exports = {profileByOperator, flops};
