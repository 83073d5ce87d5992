#include "form_store.h"

#include <cstring>

namespace taso::gen {
namespace {

uint64_t Rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

uint64_t Mix(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdull;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ull;
  k ^= k >> 33;
  return k;
}

}  // namespace

FormKey KeyOf(std::string_view s) {
  constexpr uint64_t c1 = 0x87c37b91114253d5ull, c2 = 0x4cf5ad432745937full;
  const size_t n = s.size(), blocks = n / 16;
  const auto* data = reinterpret_cast<const uint8_t*>(s.data());
  uint64_t h1 = 0x243F6A8885A308D3ull, h2 = 0x13198A2E03707344ull;  // the seed
  for (size_t i = 0; i < blocks; ++i) {
    uint64_t k1, k2;
    std::memcpy(&k1, data + 16 * i, 8);
    std::memcpy(&k2, data + 16 * i + 8, 8);
    k1 *= c1, k1 = Rotl(k1, 31), k1 *= c2, h1 ^= k1;
    h1 = Rotl(h1, 27), h1 += h2, h1 = h1 * 5 + 0x52dce729;
    k2 *= c2, k2 = Rotl(k2, 33), k2 *= c1, h2 ^= k2;
    h2 = Rotl(h2, 31), h2 += h1, h2 = h2 * 5 + 0x38495ab5;
  }
  const uint8_t* tail = data + 16 * blocks;
  uint64_t k1 = 0, k2 = 0;
  // One line per tail byte, as MurmurHash3 spells it.
  // clang-format off
  switch (n & 15) {
    case 15: k2 ^= uint64_t{tail[14]} << 48; [[fallthrough]];
    case 14: k2 ^= uint64_t{tail[13]} << 40; [[fallthrough]];
    case 13: k2 ^= uint64_t{tail[12]} << 32; [[fallthrough]];
    case 12: k2 ^= uint64_t{tail[11]} << 24; [[fallthrough]];
    case 11: k2 ^= uint64_t{tail[10]} << 16; [[fallthrough]];
    case 10: k2 ^= uint64_t{tail[9]} << 8; [[fallthrough]];
    case 9: k2 ^= uint64_t{tail[8]}; k2 *= c2, k2 = Rotl(k2, 33), k2 *= c1, h2 ^= k2; [[fallthrough]];
    case 8: k1 ^= uint64_t{tail[7]} << 56; [[fallthrough]];
    case 7: k1 ^= uint64_t{tail[6]} << 48; [[fallthrough]];
    case 6: k1 ^= uint64_t{tail[5]} << 40; [[fallthrough]];
    case 5: k1 ^= uint64_t{tail[4]} << 32; [[fallthrough]];
    case 4: k1 ^= uint64_t{tail[3]} << 24; [[fallthrough]];
    case 3: k1 ^= uint64_t{tail[2]} << 16; [[fallthrough]];
    case 2: k1 ^= uint64_t{tail[1]} << 8; [[fallthrough]];
    case 1: k1 ^= uint64_t{tail[0]}; k1 *= c1, k1 = Rotl(k1, 31), k1 *= c2, h1 ^= k1;
  }
  // clang-format on
  h1 ^= n, h2 ^= n;
  h1 += h2, h2 += h1;
  h1 = Mix(h1), h2 = Mix(h2);
  h1 += h2, h2 += h1;
  return {h1, h2};
}

bool Pack(const Candidate& c, PackedCandidate* out) {
  if (c.a_outputs.size() > kMaxPackedOutputs || c.a_outputs.size() != c.b_outputs.size()) return false;
  *out = PackedCandidate{};
  out->a = c.a;
  out->b = c.b;
  out->outputs = static_cast<uint8_t>(c.a_outputs.size());
  for (size_t i = 0; i < c.a_outputs.size(); ++i) {
    if (c.a_outputs[i] > 255 || c.b_outputs[i] > 255 || c.a_outputs[i] < 0 || c.b_outputs[i] < 0) return false;
    out->a_outputs[i] = static_cast<uint8_t>(c.a_outputs[i]);
    out->b_outputs[i] = static_cast<uint8_t>(c.b_outputs[i]);
  }
  std::memcpy(out->a_op_outputs, c.a_op_outputs.data(), kMaxOps);
  std::memcpy(out->b_op_outputs, c.b_op_outputs.data(), kMaxOps);
  return true;
}

Candidate Unpack(const PackedCandidate& p) {
  Candidate c;
  c.a = p.a;
  c.b = p.b;
  c.a_outputs.assign(p.a_outputs, p.a_outputs + p.outputs);
  c.b_outputs.assign(p.b_outputs, p.b_outputs + p.outputs);
  std::memcpy(c.a_op_outputs.data(), p.a_op_outputs, kMaxOps);
  std::memcpy(c.b_op_outputs.data(), p.b_op_outputs, kMaxOps);
  return c;
}

absl::StatusOr<bool> FormStore::Insert(const FormKey& key, const PackedCandidate& c) {
  auto [it, fresh] = index_.try_emplace(key, static_cast<uint32_t>(candidates_.size()));
  if (!fresh) return false;
  absl::Status s = candidates_.Append(c);
  if (!s.ok()) return s;
  return true;
}

}  // namespace taso::gen
