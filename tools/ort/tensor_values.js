// Tensors' values as ONNX Runtime's Node.js binding holds them, for ort_worker.js and
// ort_run.js: float16 tensors as each value's 16 bits in a Uint16Array, 64-bit integers
// as BigInts.
'use strict';

const f32 = new Float32Array(1), f32Bits = new Uint32Array(f32.buffer);

// The bits of the half nearest to x (through float32), ties to even.
function toHalfBits(x) {
  f32[0] = x;
  const b = f32Bits[0], sign = (b >>> 16) & 0x8000, exponent = (b >>> 23) & 0xff, mantissa = b & 0x7fffff;
  if (exponent === 0xff) return sign | 0x7c00 | (mantissa ? 0x200 : 0);
  const e = exponent - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  const [m, shift] = e > 0 ? [mantissa, 13] : [mantissa | 0x800000, 14 - e];
  if (shift > 24) return sign;
  let h = (e > 0 ? e << 10 : 0) | (m >>> shift);
  const rest = m & ((1 << shift) - 1), halfway = 1 << (shift - 1);
  if (rest > halfway || (rest === halfway && (h & 1))) ++h;  // a carry rounds up into the exponent
  return sign | h;
}

// The value of a half's bits.
function halfValue(h) {
  const sign = h & 0x8000 ? -1 : 1, e = (h >>> 10) & 0x1f, m = h & 0x3ff;
  if (e === 0) return sign * m * 2 ** -24;
  if (e === 0x1f) return m ? NaN : sign * Infinity;
  return sign * (1 + m / 1024) * 2 ** (e - 15);
}

// A float16 tensor's values as a Float32Array: its data are bits in a Uint16Array, or
// values where the binding wraps them in a Float16Array (Node.js releases that have one).
function halfValues(data) {
  return data instanceof Uint16Array ? Float32Array.from(data, halfValue) : Float32Array.from(data);
}

// A tensor's values as numbers (float16 decoded, 64-bit integers as Numbers); its own
// array where they are numbers already.
function numericValues(tensor) {
  if (tensor.type === 'float16') return halfValues(tensor.data);
  if (tensor.type === 'int64' || tensor.type === 'uint64') return Float64Array.from(tensor.data, Number);
  return tensor.data;
}

module.exports = {toHalfBits, numericValues};
