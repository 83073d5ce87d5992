#include "rule_writer.h"

#include <filesystem>
#include <fstream>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "taso/ir/status_macros.h"

namespace taso::gen {

absl::Status RuleSetCollector::Begin(const RuleSet& header) {
  set_ = header;
  set_.rules.clear();
  return absl::OkStatus();
}

absl::Status RuleSetCollector::Add(std::vector<Rule> batch) {
  set_.rules.insert(set_.rules.end(), std::make_move_iterator(batch.begin()), std::make_move_iterator(batch.end()));
  return absl::OkStatus();
}

RuleFileWriter::RuleFileWriter(std::string path, bool text, std::string command)
    : path_(std::move(path)), command_(std::move(command)), text_(text) {}

RuleFileWriter::~RuleFileWriter() {
  for (std::FILE* f : {out_, body_})
    if (f) std::fclose(f);
  if (out_) std::remove((path_ + ".tmp").c_str());
}

absl::Status RuleFileWriter::Write(const std::string& bytes, std::FILE* f) {
  if (std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size())
    return absl::InternalError(absl::StrCat("failed writing '", path_, "' (disk full?)"));
  return absl::OkStatus();
}

// Through WriteRuleSet itself, into a scratch file beside the output.
absl::StatusOr<std::string> RuleFileWriter::Serialized(const RuleSet& set) const {
  const std::string scratch = path_ + ".part";
  RETURN_IF_ERROR(WriteRuleSet(set, scratch));
  std::ifstream f(scratch, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const bool bad = f.bad();
  f.close();
  std::remove(scratch.c_str());
  if (bad) return absl::InternalError(absl::StrCat("cannot read back '", scratch, "'"));
  return bytes;
}

absl::Status RuleFileWriter::Begin(const RuleSet& header) {
  header_ = header;
  header_.rules.clear();
  header_.command = command_;
  out_ = std::fopen((path_ + ".tmp").c_str(), "wb");
  if (!out_) return absl::PermissionDeniedError(absl::StrCat("cannot write '", path_, "'"));
  if (text_) {
    body_ = std::tmpfile();
    if (!body_) return absl::InternalError("cannot make a temporary file");
    return absl::OkStatus();
  }
  // The fields before the rules (proved_by, after them, is empty in what taso-gen writes).
  if (!header_.proved_by.empty()) return absl::InvalidArgumentError("a generated rule set is not proved");
  ASSIGN_OR_RETURN(std::string bytes, Serialized(header_));
  return Write(bytes, out_);
}

absl::Status RuleFileWriter::Add(std::vector<Rule> batch) {
  if (!out_) return absl::FailedPreconditionError("rule writer: Add before Begin");
  rules_ += batch.size();
  if (text_) {
    std::string s;
    for (const Rule& r : batch) absl::StrAppend(&s, "\n", RuleText(r));
    return Write(s, body_);
  }
  // The rules' fields alone: what WriteRuleSet writes for a set holding only them, less
  // the format version it always writes first (field 1, a varint).
  RuleSet only;
  only.rules = std::move(batch);
  ASSIGN_OR_RETURN(std::string bytes, Serialized(only));
  size_t at = 0;
  if (!bytes.empty() && bytes[0] == 0x08) {
    at = 1;
    while (at < bytes.size() && (static_cast<uint8_t>(bytes[at]) & 0x80)) ++at;
    ++at;
  }
  return Write(bytes.substr(std::min(at, bytes.size())), out_);
}

absl::Status RuleFileWriter::End() {
  if (!out_) return absl::FailedPreconditionError("rule writer: End before Begin");
  if (text_) {
    // RuleSetText's header, with the count it takes from the rules.
    std::string head = RuleSetText(header_);
    const std::string zero = "# taso rules: 0 rules";
    if (head.rfind(zero, 0) == 0) head = absl::StrCat("# taso rules: ", rules_, " rules", head.substr(zero.size()));
    RETURN_IF_ERROR(Write(head, out_));
    std::rewind(body_);
    char buf[1 << 16];
    for (size_t n; (n = std::fread(buf, 1, sizeof(buf), body_)) > 0;)
      if (std::fwrite(buf, 1, n, out_) != n) return absl::InternalError(absl::StrCat("failed writing '", path_, "'"));
    std::fclose(body_);
    body_ = nullptr;
  }
  const bool ok = std::fflush(out_) == 0;
  std::fclose(out_);
  out_ = nullptr;
  if (!ok) return absl::InternalError(absl::StrCat("failed writing '", path_, "'"));
  if (std::rename((path_ + ".tmp").c_str(), path_.c_str()) != 0)
    return absl::PermissionDeniedError(absl::StrCat("cannot write '", path_, "'"));
  return absl::OkStatus();
}

}  // namespace taso::gen
