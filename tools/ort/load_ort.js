// onnxruntime-node, loaded with ONNX Runtime's telemetry off. Its Linux packages from 1.29
// on record every process and session they run (a device id and an event database under
// ~/.cache/Microsoft, files in $TMPDIR) and upload them over HTTPS; these tools run users'
// models, which leave no trace of that kind, so ORT_DISABLE_TELEMETRY is set to 1 unless the
// environment gives it a value (an empty one is none: ONNX Runtime records then).
'use strict';

function loadOrt() {
  if (!process.env.ORT_DISABLE_TELEMETRY) process.env.ORT_DISABLE_TELEMETRY = '1';
  return require('onnxruntime-node');
}

module.exports = {loadOrt};
