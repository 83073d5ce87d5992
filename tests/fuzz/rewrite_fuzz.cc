// libFuzzer target rewrite (see fuzz_entries.h; bench/fuzz.sh builds and runs it).
#include "fuzz_entries.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) { return taso::fuzz::FuzzRewrite(data, size); }
