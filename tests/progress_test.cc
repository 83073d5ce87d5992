// The progress line (taso/ir/progress.h): what it writes to a terminal, and that it is silent
// off one.
#include <catch2/catch.hpp>

#include <cstdio>
#include <string>

#include "taso/ir/progress.h"

using taso::ProgressLine;

namespace {

// What `write` wrote to a ProgressLine on a temporary file.
template <typename F>
std::string Written(F write, bool as_log = false) {
  std::FILE* f = std::tmpfile();
  REQUIRE(f != nullptr);
  {
    ProgressLine line = as_log ? ProgressLine::AsLog(f) : ProgressLine(f);
    write(line);
  }
  std::rewind(f);
  std::string text;
  for (int c; (c = std::fgetc(f)) != EOF;) text.push_back(static_cast<char>(c));
  std::fclose(f);
  return text;
}

}  // namespace

TEST_CASE("The progress line rewrites one line per step and erases it at the end", "[progress]") {
  const std::string text = Written([](ProgressLine& line) {
    CHECK(line.on());
    line.Start("import", "m.onnx");
    line.Start("search");
  });
  CHECK_THAT(text, Catch::StartsWith("\r\033[Kimport: m.onnx (0.0 s)\r\033[Ksearch (0.0 s)"));
  CHECK_THAT(text, Catch::EndsWith(" s)\r\033[K"));  // erased when it goes
  CHECK(text.find('\n') == std::string::npos);
}

TEST_CASE("The progress line is silent off a terminal", "[progress]") {
  ProgressLine off(nullptr);
  CHECK_FALSE(off.on());
  off.Start("import", "m.onnx");
  off.Update("more");
  off.Clear();
}

TEST_CASE("As a log, the progress writes a line per step and erases nothing", "[progress]") {
  const std::string text = Written(
      [](ProgressLine& line) {
        line.Start("import", "m.onnx");
        line.Update("too soon to show");
        line.Start("search");
      },
      /*as_log=*/true);
  CHECK(text == "[   0.0 s] import: m.onnx (0.0 s into it)\n[   0.0 s] search (0.0 s into it)\n");
}
