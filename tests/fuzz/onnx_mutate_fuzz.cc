// libFuzzer target onnx_mutate: valid models mutated one structural change at a time
// (see fuzz_entries.h; bench/fuzz.sh builds and runs it).
#include "fuzz_entries.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return taso::fuzz::FuzzOnnxImport(data, size);
}

// One in eight mutations, and every one the structure-aware mutator cannot make, is
// libFuzzer's own on the bytes.
extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  if (seed % 8 != 0)
    if (size_t n = taso::fuzz::MutateOnnxModel(data, size, max_size, seed); n > 0) return n;
  return LLVMFuzzerMutate(data, size, max_size);
}
