// The progress line (taso/progress.h): what it writes to a terminal, and that it is silent
// off one.
#include <catch2/catch.hpp>

#include <cstdio>
#include <string>

#include "taso/progress.h"

using taso::ProgressLine;

namespace {

// What `write` wrote to a ProgressLine on a temporary file.
template <typename F>
std::string Written(F write) {
  std::FILE* f = std::tmpfile();
  REQUIRE(f != nullptr);
  {
    ProgressLine line(f);
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
