// Rules as plain data and their canonical form: the same string for every renaming of
// their inputs, which is how taso-gen tells rules apart (TASO section 2.5).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "enumerator.h"

namespace taso::gen {

// A rule as plain data: tensor ids are the inputs 0..n-1, then each graph's operator
// outputs in order.
struct PGraph {
  struct Op {
    int variant;
    absl::InlinedVector<int, 3> in;  // no allocation: tens of millions are made
    int outputs;
  };
  std::vector<Op> ops;
  std::vector<int> outputs;
};
// What a rule input is, for telling renamings apart: rules are shape-agnostic, so its
// rank and whether it is an activation or a weight, not its example shape. A byte
// (rank * 2, plus 1 for a weight), ordered as its text ("2a" < "2w" < "3a"): ranks are
// below 5. Rules are built tens of millions of times; strings were a fifth of that.
using Sig = uint8_t;
Sig Signature(const Shape& s, bool activation);
// Its text: the rank, then "a" (activation) or "w" (weight).
std::string SigText(Sig sig);

// A rule's signatures, per input: no allocation for up to 16 inputs.
using Sigs = absl::InlinedVector<Sig, 16>;

struct PRule {
  Sigs input_sigs;  // per input
  PGraph a, b;
};

// Where the operators went in a canonical form: operator indices of the graph written
// first and of the one written second, in the order written; `swapped` when b came first.
struct CanonicalOrder {
  bool swapped = false;
  std::vector<int> first, second;
};

// The canonical string of a rule, the same for every renaming of its inputs: the least
// serialization over every labelling of the inputs within their signatures. Rules are
// ordered by it (and so named).
std::string Canonical(const PRule& r, CanonicalOrder* order = nullptr);

// A string equal for two rules exactly when Canonical is, found in far fewer labellings:
// inputs are ordered by how the rule uses them before ties are tried in every order (a
// weight input of a K=4 rule has up to four others of its signature). Forms are told
// apart by it; its strings are not Canonical's and order nothing.
std::string FormIdentity(const PRule& r);

// The inputs either graph reads or outputs, in order.
std::vector<int> UsedInputs(const PRule& r);

// A graph as plain data; op_outputs[o]: how many outputs operator o has.
PGraph ToPGraph(const OpSet& set, const GraphCode& code, const std::vector<int>& outputs, const uint8_t* op_outputs);

// Rebuilds a graph without operator `removed`, for `new_inputs` inputs (the first
// `old_inputs` keep their ids); the removed operator's k-th output becomes stand_in[k].
PGraph Rebuild(const PGraph& g, int old_inputs, int new_inputs, int removed, const std::vector<int>& stand_in,
               std::vector<int>* id_map);

// The id of operator `op`'s first output.
int FirstOutput(const PGraph& g, int num_inputs, size_t op);

// Are the graph's outputs exactly the tensors no operator reads?
bool OutputsAreSinks(const PGraph& g, int num_inputs);

}  // namespace taso::gen
