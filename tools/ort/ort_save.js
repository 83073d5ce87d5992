#!/usr/bin/env node
// ort_save.js MODEL.onnx OUT.onnx [--level basic|extended|all]
// Writes the model as an ONNX Runtime session optimizes it (the session option
// optimizedModelFilePath; level extended by default), as users save models optimized
// offline: ONNX Runtime's own operators (FusedConv, FusedMatMul, LayerNormalization at
// any opset, ...) in place of the patterns it fused. Level all also lays out convolutions
// for this machine's vector width (com.microsoft.nchwc), which only this machine runs.
'use strict';
const fs = require('fs');

function fail(message) {
  process.stderr.write(`ort_save: error: ${message}\n`);
  process.exit(2);
}

async function main() {
  const args = process.argv.slice(2);
  let level = 'extended';
  const levelAt = args.indexOf('--level');
  if (levelAt >= 0) {
    level = args[levelAt + 1];
    args.splice(levelAt, 2);
  }
  if (args.length !== 2) fail('usage: ort_save.js MODEL.onnx OUT.onnx [--level basic|extended|all]');
  if (!['basic', 'extended', 'all'].includes(level)) fail(`unknown --level '${level}' (basic, extended, all)`);
  const [model, out] = args;
  if (!fs.existsSync(model)) fail(`cannot read ${model}`);
  let ort;
  try {
    ort = require('./load_ort').loadOrt();
  } catch (e) {
    fail(`onnxruntime-node is not installed (run scripts/setup.sh): ${e.message}`);
  }
  ort.env.logLevel = 'error';
  try {
    const session = await ort.InferenceSession.create(model, {graphOptimizationLevel: level, optimizedModelFilePath: out});
    await session.release();
  } catch (e) {
    fail(`ONNX Runtime cannot optimize ${model}: ${String(e.message || e).split('\n')[0]}`);
  }
}

main();
