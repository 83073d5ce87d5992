// A rule set written as its rules come, a batch at a time (issue 46: at K=4 over every
// operator the rules do not fit in memory at once), byte for byte the file WriteRuleSet
// or RuleSetText would write for the whole set.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "taso/rules/rules.h"

namespace taso::gen {

// Receives a rule set: its header (every field but the rules) first, then the rules in
// order, a batch at a time, then End.
class RuleSetSink {
 public:
  virtual ~RuleSetSink() = default;
  virtual absl::Status Begin(const RuleSet& header) = 0;
  virtual absl::Status Add(std::vector<Rule> batch) = 0;
  virtual absl::Status End() = 0;
};

// Keeps the whole set in memory.
class RuleSetCollector : public RuleSetSink {
 public:
  absl::Status Begin(const RuleSet& header) override;
  absl::Status Add(std::vector<Rule> batch) override;
  absl::Status End() override { return absl::OkStatus(); }
  RuleSet& rules() { return set_; }

 private:
  RuleSet set_;
};

// Writes the binary database (or with `text`, the readable form) to `path`: to path.tmp
// while it is written, renamed at End. `command` replaces the header's.
class RuleFileWriter : public RuleSetSink {
 public:
  RuleFileWriter(std::string path, bool text, std::string command);
  ~RuleFileWriter() override;
  absl::Status Begin(const RuleSet& header) override;
  absl::Status Add(std::vector<Rule> batch) override;
  absl::Status End() override;
  size_t rules() const { return rules_; }

 private:
  absl::Status Write(const std::string& bytes, std::FILE* f);
  // What WriteRuleSet writes for `set`.
  absl::StatusOr<std::string> Serialized(const RuleSet& set) const;

  std::string path_, command_;
  bool text_;
  RuleSet header_;
  std::FILE* out_ = nullptr;   // path.tmp
  std::FILE* body_ = nullptr;  // text: the rules, before the header that counts them
  size_t rules_ = 0;
};

}  // namespace taso::gen
