// The operator axioms: SMT-LIB2 files under axioms/, a shared signature.smt2 (the sort of
// tensors and one function per operator) and one file per operator family whose
// top-level forms are named assertions.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace taso::verify {

struct Axiom {
  std::string name;  // its :named label
  std::string file;  // e.g. "conv.smt2"
  int line = 0;      // where its form starts
  std::string text;  // the (assert ...) form
};

struct AxiomSet {
  std::string signature;            // declarations shared by axioms and rules
  std::string families;             // every family file, concatenated
  std::vector<Axiom> axioms;        // in file order
  std::set<std::string> symbols;    // the functions some axiom mentions
  std::set<std::string> constants;  // the named values signature.smt2 defines
};

// Reads and checks every .smt2 file of `dir`; a syntax error names the file, the line
// and Z3's message.
absl::StatusOr<AxiomSet> LoadAxioms(const std::string& dir);

}  // namespace taso::verify
