// The fuzz targets' logic, one entry per target. The libFuzzer programs
// (tests/fuzz/*_fuzz.cc, built with -DTASO_FUZZ=ON and clang) only call these, and the
// normal build's test [fuzz] replays the seed corpora and the saved regressions through
// them. An entry returns 0 for every input; a finding is a crash, a sanitizer report or a
// FUZZ_CHECK that fails (it prints what broke and aborts).
#pragma once

#include <cstddef>
#include <cstdint>

namespace taso::fuzz {

// Arbitrary bytes as an ONNX ModelProto: import; what import accepts must export, and
// the export import again, or fail with a Status; small library-only graphs also run.
int FuzzOnnxImport(const uint8_t* data, size_t size);

// The structure-aware mutator of the onnx_mutate target: parses a model from `data`,
// applies one mutation chosen by `seed` and writes it back; returns the new size. Returns 0
// when `data` is no model, no mutation applies or the mutant exceeds `max_size`: the caller
// then mutates the bytes instead.
size_t MutateOnnxModel(uint8_t* data, size_t size, size_t max_size, unsigned seed);

// A rule database, in its binary form or (first byte 't') its protobuf text form: read;
// every rule's instances and both directions prepared for matching.
int FuzzRules(const uint8_t* data, size_t size);

// An axiom family file after the shipped signature, or (first byte 's') a signature before
// a shipped family file: loaded and checked, no solving.
int FuzzAxioms(const uint8_t* data, size_t size);

// A small random graph around the sources of random shipped rules: every rewrite the
// matcher finds and the rewriter accepts must keep the graph's output shapes and compute
// what the original computes on random inputs.
int FuzzRewrite(const uint8_t* data, size_t size);

}  // namespace taso::fuzz
