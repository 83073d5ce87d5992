#include "onnx_isolated_inference.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <string>

#include "onnx/shape_inference/implementation.h"

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

// In the child: infers, writes the inferred value_info and outputs (a GraphProto holding
// only those) to `fd`, and ends without running the parent's exit handlers.
[[noreturn]] void InferInChild(onnx::ModelProto model, int fd) {
  DieQuietlyOnCrash();
  int status = 0;
  try {
    onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(),
                                       onnx::ShapeInferenceOptions(false, 0, true));
    onnx::GraphProto types;
    *types.mutable_value_info() = model.graph().value_info();
    *types.mutable_output() = model.graph().output();
    const std::string bytes = types.SerializeAsString();
    for (size_t done = 0; done < bytes.size();) {
      const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
      if (n <= 0) _exit(3);
      done += static_cast<size_t>(n);
    }
  } catch (...) {
    status = 2;
  }
  close(fd);
  _exit(status);
}

// Reads `fd` to its end, or until `deadline`; false on a read error or the deadline.
bool ReadAll(int fd, std::chrono::steady_clock::time_point deadline, std::string* out) {
  char buffer[1 << 16];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
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

}  // namespace

bool InferShapesIsolated(onnx::ModelProto* model, int timeout_seconds) {
  int fds[2];
  if (pipe(fds) != 0) return false;
  const pid_t child = fork();
  if (child < 0) {
    close(fds[0]);
    close(fds[1]);
    return false;
  }
  if (child == 0) {
    close(fds[0]);
    InferInChild(*model, fds[1]);
  }
  close(fds[1]);
  std::string bytes;
  const bool complete = ReadAll(
      fds[0], std::chrono::steady_clock::now() + std::chrono::seconds(timeout_seconds), &bytes);
  close(fds[0]);
  if (!complete) kill(child, SIGKILL);
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  onnx::GraphProto types;
  if (!complete || !WIFEXITED(status) || WEXITSTATUS(status) != 0 || !types.ParseFromString(bytes))
    return false;
  *model->mutable_graph()->mutable_value_info() = types.value_info();
  *model->mutable_graph()->mutable_output() = types.output();
  return true;
}

}  // namespace taso
