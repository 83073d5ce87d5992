#!/usr/bin/env node
// Times ONNX models in one ONNX Runtime process (CPU, level all, 1 thread, no spinning,
// as tools/ort/ort_worker.js runs them), each back to back in blocks of runs, and prints
// each block's median in microseconds: how a model's time settles after a process starts,
// and what a small model costs with its threads awake. Models run in the order given.
// Usage: node bench/probe/ort_probe.js [--blocks B] [--runs R] MODEL.onnx ...
'use strict';
const path = require('path');
const ort = require(path.join(__dirname, '../../tools/ort/load_ort')).loadOrt();

const options = {
  graphOptimizationLevel: 'all', executionProviders: ['cpu'], intraOpNumThreads: 1, interOpNumThreads: 1,
  extra: {session: {intra_op: {allow_spinning: '0'}, inter_op: {allow_spinning: '0'}}},
};
const median = t => [...t].sort((x, y) => x - y)[t.length >> 1];

async function main() {
  const args = process.argv.slice(2);
  let blocks = 6, runs = 30;
  const models = [];
  for (let i = 0; i < args.length; ++i) {
    if (args[i] === '--blocks') blocks = Number(args[++i]);
    else if (args[i] === '--runs') runs = Number(args[++i]);
    else models.push(args[i]);
  }
  for (const model of models) {
    const session = await ort.InferenceSession.create(model, options);
    const feeds = {};
    for (const meta of session.inputMetadata) {
      const n = meta.shape.reduce((x, y) => x * y, 1);
      feeds[meta.name] = new ort.Tensor('float32', Float32Array.from({length: n}, () => Math.random() * 2 - 1), meta.shape);
    }
    const medians = [];
    for (let b = 0; b < blocks; ++b) {
      const times = [];
      for (let r = 0; r < runs; ++r) {
        const start = process.hrtime.bigint();
        await session.run(feeds);
        times.push(Number(process.hrtime.bigint() - start) / 1e3);
      }
      medians.push(median(times).toFixed(1));
    }
    console.log(`${path.basename(model)}: ${medians.join(' ')}`);
  }
}

main();
