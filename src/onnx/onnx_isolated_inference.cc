#include "taso/onnx/onnx_isolated_inference.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <functional>
#include <string>

#include "absl/strings/str_cat.h"
#include "onnx/shape_inference/implementation.h"
#include "onnx/version_converter/convert.h"

// Set by a sanitizer runtime when one is linked (fuzzing builds): a fuzzer registers a
// death callback that saves the current input as a finding, which a crash of the child
// must not do; the parent goes on.
extern "C" void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

namespace taso {
namespace {

// A crash in the child ends the child by its signal alone: the handlers a sanitizer or a
// fuzzer installed (which report the crash as the process's own) are set back to default.
void DieQuietlyOnCrash() {
  if (__sanitizer_set_death_callback) __sanitizer_set_death_callback(nullptr);
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  for (int signal : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) sigaction(signal, &default_action, nullptr);
}

// Writes all of `bytes` to `fd`; false on a write error.
bool WriteAll(int fd, const std::string& bytes) {
  for (size_t done = 0; done < bytes.size();) {
    const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// In the child: writes what `work` returns to `fd` and exits 0, or the message of what it
// threw and exits 2; ends without running the parent's exit handlers.
[[noreturn]] void RunInChild(const std::function<std::string()>& work, int fd) {
  DieQuietlyOnCrash();
  int status = 0;
  std::string bytes;
  try {
    bytes = work();
  } catch (const std::exception& e) {
    bytes = e.what();
    status = 2;
  } catch (...) {
    status = 2;
  }
  if (!WriteAll(fd, bytes)) status = 3;
  close(fd);
  _exit(status);
}

// Reads `fd` to its end, or until `deadline`; false on a read error or the deadline.
bool ReadAll(int fd, std::chrono::steady_clock::time_point deadline, std::string* out) {
  char buffer[1 << 16];
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    const int ready = poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return false;
    const ssize_t n = read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) return true;
    out->append(buffer, static_cast<size_t>(n));
  }
}

// What a child process running `work` gave: its bytes when it ended normally.
struct ChildResult {
  enum Outcome { kDone, kThrew, kDied } outcome = kDied;  // kDied: crashed, timed out or failed to start
  std::string bytes;  // kDone: what `work` returned; kThrew: the exception's message
};

// Runs `work` in a child process, allowed `timeout_seconds`.
ChildResult Isolated(const std::function<std::string()>& work, int timeout_seconds) {
  int fds[2];
  if (pipe(fds) != 0) return {};
  const pid_t child = fork();
  if (child < 0) {
    close(fds[0]);
    close(fds[1]);
    return {};
  }
  if (child == 0) {
    close(fds[0]);
    RunInChild(work, fds[1]);
  }
  close(fds[1]);
  ChildResult result;
  const bool complete =
      ReadAll(fds[0], std::chrono::steady_clock::now() + std::chrono::seconds(timeout_seconds), &result.bytes);
  close(fds[0]);
  if (!complete) kill(child, SIGKILL);
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (complete && WIFEXITED(status) && WEXITSTATUS(status) <= 2)
    result.outcome = WEXITSTATUS(status) == 0 ? ChildResult::kDone : ChildResult::kThrew;
  return result;
}

}  // namespace

bool InferShapesIsolated(onnx::ModelProto* model, int timeout_seconds) {
  const ChildResult result = Isolated(
      [model] {
        onnx::ModelProto copy = *model;
        onnx::shape_inference::InferShapes(copy, onnx::OpSchemaRegistry::Instance(),
                                           onnx::ShapeInferenceOptions(false, 0, true));
        onnx::GraphProto types;
        *types.mutable_value_info() = copy.graph().value_info();
        *types.mutable_output() = copy.graph().output();
        return types.SerializeAsString();
      },
      timeout_seconds);
  onnx::GraphProto types;
  if (result.outcome != ChildResult::kDone || !types.ParseFromString(result.bytes)) return false;
  *model->mutable_graph()->mutable_value_info() = types.value_info();
  *model->mutable_graph()->mutable_output() = types.output();
  return true;
}

absl::StatusOr<onnx::ModelProto> ConvertVersionIsolated(const onnx::ModelProto& model, int target_opset,
                                                        int timeout_seconds) {
  const ChildResult result =
      Isolated([&] { return onnx::version_conversion::ConvertVersion(model, target_opset).SerializeAsString(); },
               timeout_seconds);
  onnx::ModelProto converted;
  switch (result.outcome) {
    case ChildResult::kDone:
      if (converted.ParseFromString(result.bytes)) return converted;
      return absl::InvalidArgumentError("ONNX's version converter gave a model that does not parse");
    case ChildResult::kThrew:
      return absl::InvalidArgumentError(result.bytes.substr(0, result.bytes.find('\n')));
    case ChildResult::kDied:
      break;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("ONNX's version converter crashed or took longer than ", timeout_seconds, " s"));
}

}  // namespace taso
