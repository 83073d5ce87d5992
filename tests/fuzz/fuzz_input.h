// Reads choices from a fuzzer's bytes. libFuzzer's FuzzedDataProvider is clang's header,
// and the entries also build with g++, so this is the small part of it they need. Once
// the bytes run out every choice is the smallest one, so every input is a valid run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace taso::fuzz {

class FuzzInput {
 public:
  FuzzInput(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  // A number in [0, n); 0 when n <= 1 or the bytes are spent.
  uint32_t Below(uint32_t n) {
    if (n <= 1) return 0;
    uint32_t x = 0;
    for (uint32_t span = n - 1; span != 0 && pos_ < size_; span >>= 8) x = (x << 8) | data_[pos_++];
    return x % n;
  }
  // A number in [lo, hi].
  int64_t InRange(int64_t lo, int64_t hi) { return lo + Below(static_cast<uint32_t>(hi - lo + 1)); }
  bool Bool() { return Below(2) == 1; }
  uint64_t U64() {
    uint64_t x = 0;
    for (int i = 0; i < 8 && pos_ < size_; ++i) x = (x << 8) | data_[pos_++];
    return x;
  }
  // Every byte not read yet.
  std::string Rest() {
    std::string s(reinterpret_cast<const char*>(data_ + pos_), size_ - pos_);
    pos_ = size_;
    return s;
  }
  bool empty() const { return pos_ >= size_; }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

}  // namespace taso::fuzz
