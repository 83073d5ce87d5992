// The axioms target: the axiom loader on fuzzed files (parsing and checks; no solving).
#include <z3++.h>

#include "axioms.h"
#include "fuzz_entries.h"
#include "scratch.h"

namespace taso::fuzz {
namespace {

// Loads a folder of two files: signature.smt2 and one family file.
void LoadPair(absl::string_view signature, absl::string_view family) {
  WriteScratchFile("signature.smt2", signature);
  const std::string path = WriteScratchFile("family.smt2", family);
  (void)verify::LoadAxioms(path.substr(0, path.rfind('/'))).status();
}

}  // namespace

// The bytes as a family file after the shipped signature, or (after a leading 's') as the
// signature before a shipped family file. One load per input: each makes a Z3 context,
// which dominates the time.
int FuzzAxioms(const uint8_t* data, size_t size) {
  static const bool kQuiet = [] {  // Z3's warnings on odd attributes: thousands a second
    z3::set_param("warning", false);
    return true;
  }();
  (void)kQuiet;
  static const std::string kSignature = SourceFile("axioms/signature.smt2");
  static const std::string kFamily = SourceFile("axioms/elementwise.smt2");
  const absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  if (!bytes.empty() && bytes[0] == 's')
    LoadPair(bytes.substr(1), kFamily);
  else
    LoadPair(kSignature, bytes);
  return 0;
}

}  // namespace taso::fuzz
