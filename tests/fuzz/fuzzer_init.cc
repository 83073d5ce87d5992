// Linked into every libFuzzer program: before the first input, protobuf's log of each
// malformed message is turned off (a fuzzer feeds thousands a second; the entries see the
// parse result).
#include "google/protobuf/stubs/logging.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}
