#include "axioms.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include <z3++.h>

#include "absl/strings/str_cat.h"

namespace taso::verify {
namespace {

absl::StatusOr<std::string> ReadText(const std::filesystem::path& p) {
  std::ifstream f(p);
  if (!f) return absl::NotFoundError(absl::StrCat("cannot read '", p.string(), "'"));
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

int Lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

// Z3 reports "(error "line N column M: message")" counted over the text it was given;
// the line is made relative to the file by taking off the lines put before it.
std::string Z3Error(const std::string& message, int lines_before, int* line) {
  static const std::regex kWhere(R"(line (\d+) column (\d+): ([^"]*))");
  std::smatch m;
  if (!std::regex_search(message, m, kWhere)) {
    *line = 0;
    return message;
  }
  *line = std::stoi(m[1]) - lines_before;
  return m[3];
}

// The top-level forms of a file, with the line each starts on (comments skipped).
std::vector<std::pair<int, std::string>> TopLevelForms(const std::string& text) {
  std::vector<std::pair<int, std::string>> forms;
  int depth = 0, line = 1, start_line = 0;
  size_t start = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') ++line;
    if (in_string) {
      in_string = c != '"';
      continue;
    }
    if (c == ';') {
      while (i + 1 < text.size() && text[i + 1] != '\n') ++i;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '(') {
      if (depth++ == 0) {
        start = i;
        start_line = line;
      }
    } else if (c == ')' && depth > 0 && --depth == 0) {
      forms.push_back({start_line, text.substr(start, i + 1 - start)});
    }
  }
  return forms;
}

}  // namespace

absl::StatusOr<AxiomSet> LoadAxioms(const std::string& dir) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(dir)) return absl::NotFoundError(absl::StrCat("no axioms directory '", dir, "'"));
  AxiomSet set;
  const fs::path signature = fs::path(dir) / "signature.smt2";
  if (!fs::exists(signature)) return absl::NotFoundError(absl::StrCat("'", signature.string(), "' is missing"));
  auto sig = ReadText(signature);
  if (!sig.ok()) return sig.status();
  set.signature = *sig;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.path().extension() == ".smt2" && entry.path().filename() != "signature.smt2")
      files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  z3::context ctx;
  try {
    ctx.parse_string(set.signature.c_str());
  } catch (const z3::exception& e) {
    int line;
    std::string msg = Z3Error(e.msg(), 0, &line);
    return absl::InvalidArgumentError(absl::StrCat(signature.string(), ":", line, ": ", msg));
  }
  static const std::regex kConstant(R"(\(define-fun\s+([A-Za-z0-9_]+)\s+\(\)\s+Int)");
  for (auto it = std::sregex_iterator(set.signature.begin(), set.signature.end(), kConstant);
       it != std::sregex_iterator(); ++it)
    set.constants.insert((*it)[1]);
  static const std::regex kName(R"(:named\s+([A-Za-z0-9_.-]+))");
  static const std::regex kApplied(R"(\(([a-z][a-z0-9]*)\s)");
  for (const fs::path& file : files) {
    auto text = ReadText(file);
    if (!text.ok()) return text.status();
    try {
      ctx.parse_string((set.signature + *text).c_str());
    } catch (const z3::exception& e) {
      int line;
      std::string msg = Z3Error(e.msg(), Lines(set.signature), &line);
      return absl::InvalidArgumentError(absl::StrCat(file.string(), ":", line, ": ", msg));
    }
    for (auto& [line, form] : TopLevelForms(*text)) {
      if (form.rfind("(assert", 0) != 0) continue;
      std::smatch m;
      if (!std::regex_search(form, m, kName))
        return absl::InvalidArgumentError(absl::StrCat(file.string(), ":", line, ": an axiom needs a :named label"));
      for (const Axiom& a : set.axioms)
        if (a.name == m[1])
          return absl::InvalidArgumentError(absl::StrCat(file.string(), ":", line, ": axiom '", a.name,
                                                         "' is also defined in ", a.file, ":", a.line));
      set.axioms.push_back({m[1], file.filename().string(), line, form});
      for (auto it = std::sregex_iterator(form.begin(), form.end(), kApplied); it != std::sregex_iterator(); ++it)
        set.symbols.insert((*it)[1]);
    }
    set.families += *text;
    set.families += "\n";
  }
  if (set.axioms.empty()) return absl::InvalidArgumentError(absl::StrCat("no axioms in '", dir, "'"));
  return set;
}

}  // namespace taso::verify
