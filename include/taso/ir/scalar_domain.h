// The scalar domains the reference kernels are instantiated over.
//
// Every operator's reference kernel is one template over a scalar type S; what differs
// between domains is collected here:
//   float     - tests, the reference executor, the optimizer's self-check;
//   uint32_t  - fingerprints: wrapping ring arithmetic (never signed overflow), with the
//               non-linear functions replaced by fixed non-linear integer functions;
//   symbolic  - added by the verifier (activations as uninterpreted functions).
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace taso {

template <typename S>
struct Domain;

template <>
struct Domain<float> {
  static float Zero() { return 0.0f; }
  static float One() { return 1.0f; }
  static float Lowest() { return -std::numeric_limits<float>::infinity(); }
  static float FromDouble(double d) { return static_cast<float>(d); }
  static float InverseCount(int64_t n) { return 1.0f / static_cast<float>(n); }
  static bool Greater(float a, float b) { return a > b; }
  static float Max(float a, float b) { return a > b ? a : b; }
  static float Relu(float x) { return x > 0.0f ? x : 0.0f; }
  static float Sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }
  static float Tanh(float x) { return std::tanh(x); }
  static float Erf(float x) { return std::erf(x); }
  static float Sqrt(float x) { return std::sqrt(x); }
  static float Exp(float x) { return std::exp(x); }
  static float Div(float a, float b) { return a / b; }
  static float Pow(float a, float b) { return std::pow(a, b); }
};

// Wrapping 32-bit arithmetic. Order comparisons read the bits as two's-complement so that
// Relu (max with zero) and max pooling stay monotone and idempotent, as they are on reals.
template <>
struct Domain<uint32_t> {
  static uint32_t Zero() { return 0u; }
  static uint32_t One() { return 1u; }
  static uint32_t Lowest() { return 0x80000000u; }
  static uint32_t FromDouble(double d) { return std::bit_cast<uint32_t>(static_cast<float>(d)); }
  // The multiplicative inverse of an odd count modulo 2^32 makes "average = sum * 1/n"
  // exact in the ring; an even count gets a fixed odd stand-in, applied consistently.
  static uint32_t InverseCount(int64_t n) { return OddInverse(static_cast<uint32_t>(n) | 1u); }
  static bool Greater(uint32_t a, uint32_t b) { return static_cast<int32_t>(a) > static_cast<int32_t>(b); }
  static uint32_t Max(uint32_t a, uint32_t b) { return Greater(a, b) ? a : b; }
  static uint32_t Relu(uint32_t x) { return static_cast<int32_t>(x) > 0 ? x : 0u; }
  // Fixed non-linear mixing functions: distinct per operator, deterministic.
  static uint32_t Sigmoid(uint32_t x) { return Mix(x, 0x9E3779B1u); }
  static uint32_t Tanh(uint32_t x) { return Mix(x, 0x85EBCA77u); }
  static uint32_t Erf(uint32_t x) { return Mix(x, 0xC2B2AE3Du); }
  static uint32_t Sqrt(uint32_t x) { return Mix(x, 0x27D4EB2Fu); }
  static uint32_t Exp(uint32_t x) { return Mix(x, 0x165667B1u); }
  static uint32_t Div(uint32_t a, uint32_t b) { return a * OddInverse(b | 1u); }
  static uint32_t Pow(uint32_t a, uint32_t b) { return Mix(a ^ Mix(b, 0xD3A2646Cu), 0xFD7046C5u); }

  static uint32_t OddInverse(uint32_t a) {
    uint32_t x = a;  // Newton's iteration: each step doubles the correct low bits.
    for (int i = 0; i < 5; ++i) x *= 2u - a * x;
    return x;
  }
  static uint32_t Mix(uint32_t x, uint32_t k) {
    x ^= x >> 15;
    x *= k;
    x ^= x >> 13;
    x *= x | 1u;
    return x ^ (x >> 16);
  }
};

}  // namespace taso
