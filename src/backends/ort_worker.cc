#include "taso/backends/ort_worker.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "taso/ir/status_macros.h"

extern char** environ;

#ifndef TASO_SOURCE_DIR
#define TASO_SOURCE_DIR "."
#endif

namespace taso {

namespace {

constexpr absl::string_view kErrorKey = "error";

// The CPUs this process may run on (what ONNX Runtime's default sizes itself by).
int AllowedCpus() {
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0)
    return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  return CPU_COUNT(&allowed);
}

// The environment the worker runs in: this process's, with glibc's malloc keeping freed
// memory for reuse. By default an allocation of 128 KiB or more is mapped afresh until
// malloc's threshold has adapted, and a run whose output is that large paid page faults
// for it (a 256x256 product ran 1.0 ms, then 0.19 ms, in a session made after another),
// as a server that has run for a while does not.
std::vector<char*> WorkerEnvironment(std::vector<std::string>& storage) {
  storage = {"MALLOC_MMAP_THRESHOLD_=1073741824", "MALLOC_TRIM_THRESHOLD_=1073741824"};
  std::vector<char*> env;
  for (std::string& s : storage) env.push_back(s.data());
  for (char** e = environ; *e != nullptr; ++e)
    if (!absl::StartsWith(*e, "MALLOC_MMAP_THRESHOLD_=") && !absl::StartsWith(*e, "MALLOC_TRIM_THRESHOLD_="))
      env.push_back(*e);
  env.push_back(nullptr);
  return env;
}

// The child's ends of two pipes become its stdin and stdout; its stderr is discarded
// (ONNX Runtime's warnings), so replies are the only thing the parent reads.
absl::StatusOr<pid_t> Spawn(const std::string& node, const std::string& script, int child_in, int child_out) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, child_in, STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, child_out, STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  std::vector<char*> argv = {const_cast<char*>(node.c_str()), const_cast<char*>(script.c_str()), nullptr};
  std::vector<std::string> env_storage;
  std::vector<char*> env = WorkerEnvironment(env_storage);
  pid_t pid = -1;
  const int err = posix_spawnp(&pid, node.c_str(), &actions, nullptr, argv.data(), env.data());
  posix_spawn_file_actions_destroy(&actions);
  if (err == ENOENT)
    return absl::FailedPreconditionError(
        absl::StrCat("Node.js ('", node, "') is not installed or not on PATH (scripts/setup.sh installs it)"));
  if (err != 0) return absl::InternalError(absl::StrCat("cannot start ", node, ": ", std::strerror(err)));
  return pid;
}

// The text after `"key":` in a flat JSON object, or NotFound.
absl::StatusOr<absl::string_view> ValueText(absl::string_view json, absl::string_view key) {
  const std::string quoted = absl::StrCat("\"", key, "\":");
  const size_t at = json.find(quoted);
  if (at == absl::string_view::npos)
    return absl::NotFoundError(absl::StrCat("no \"", key, "\" in the worker's reply ", json.substr(0, 200)));
  return absl::StripLeadingAsciiWhitespace(json.substr(at + quoted.size()));
}

absl::Status Malformed(absl::string_view key, absl::string_view json) {
  return absl::DataLossError(absl::StrCat("the worker's reply has a malformed \"", key, "\": ", json.substr(0, 200)));
}

}  // namespace

std::string OrtThreadsName(int threads) {
  if (threads <= 0) return "its default threads";
  return absl::StrCat(threads, threads == 1 ? " thread" : " threads");
}

std::string OrtThreadsKey(int threads) {
  if (threads <= 0) return absl::StrCat("tdefault", AllowedCpus(), "cpu");
  return absl::StrCat("t", threads);
}

std::string DefaultOrtWorkerScript() {
  if (const char* env = std::getenv("TASO_ORT_WORKER"); env != nullptr && *env != '\0') return env;
  return TASO_SOURCE_DIR "/tools/ort/ort_worker.js";
}

absl::StatusOr<std::unique_ptr<OrtWorker>> OrtWorker::Start(const OrtWorkerOptions& options) {
  std::unique_ptr<OrtWorker> worker(new OrtWorker());
  worker->options_ = options;
  if (worker->options_.script.empty()) worker->options_.script = DefaultOrtWorkerScript();
  const std::string& script = worker->options_.script;
  if (!std::filesystem::is_regular_file(script))
    return absl::FailedPreconditionError(
        absl::StrCat("the ONNX Runtime worker script ", script, " does not exist (TASO_ORT_WORKER names another)"));
  signal(SIGPIPE, SIG_IGN);  // a dead worker must make writes fail, not end this process
  int in[2], out[2];
  if (pipe2(in, O_CLOEXEC) != 0) return absl::InternalError("cannot make a pipe");
  if (pipe2(out, O_CLOEXEC) != 0) {
    close(in[0]);
    close(in[1]);
    return absl::InternalError("cannot make a pipe");
  }
  absl::StatusOr<pid_t> pid = Spawn(worker->options_.node, script, in[0], out[1]);
  close(in[0]);
  close(out[1]);
  worker->to_worker_ = in[1];
  worker->from_worker_ = out[0];
  if (!pid.ok()) return pid.status();
  worker->pid_ = *pid;
  ASSIGN_OR_RETURN(const std::string hello, worker->Request(R"({"op": "hello"})"));
  ASSIGN_OR_RETURN(worker->version_, JsonString(hello, "version"));
  return worker;
}

OrtWorker::~OrtWorker() { Stop(absl::CancelledError("the worker was stopped")); }

void OrtWorker::Stop(const absl::Status& why) {
  if (broken_.ok()) broken_ = why;
  if (to_worker_ >= 0) close(to_worker_);
  if (from_worker_ >= 0) close(from_worker_);
  to_worker_ = from_worker_ = -1;
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
}

absl::Status OrtWorker::Send(absl::string_view json) {
  const std::string line = absl::StrCat(json, "\n");
  size_t sent = 0;
  while (sent < line.size()) {
    const ssize_t n = write(to_worker_, line.data() + sent, line.size() - sent);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return absl::UnavailableError("the ONNX Runtime worker exited (cannot write to it)");
    sent += n;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> OrtWorker::ReadLine() {
  const absl::Time deadline = absl::Now() + options_.timeout;
  size_t newline;
  while ((newline = buffered_.find('\n')) == std::string::npos) {
    const int wait_ms = static_cast<int>(std::max<int64_t>(0, absl::ToInt64Milliseconds(deadline - absl::Now())));
    pollfd p{from_worker_, POLLIN, 0};
    const int ready = poll(&p, 1, wait_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0)
      return absl::DeadlineExceededError(
          absl::StrCat("the ONNX Runtime worker did not answer within ", absl::FormatDuration(options_.timeout)));
    char chunk[4096];
    const ssize_t n = read(from_worker_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return absl::UnavailableError("the ONNX Runtime worker exited");
    buffered_.append(chunk, n);
  }
  std::string line = buffered_.substr(0, newline);
  buffered_.erase(0, newline + 1);
  return line;
}

absl::StatusOr<std::string> OrtWorker::Request(absl::string_view json) {
  RETURN_IF_ERROR(broken_);
  absl::Status sent = Send(json);
  absl::StatusOr<std::string> reply = sent.ok() ? ReadLine() : absl::StatusOr<std::string>(sent);
  if (reply.ok() && !(absl::StartsWith(*reply, "{") && absl::EndsWith(*reply, "}")))
    reply = absl::DataLossError(absl::StrCat("the ONNX Runtime worker wrote no JSON object: ", reply->substr(0, 200)));
  if (!reply.ok()) {
    Stop(reply.status());
    return reply.status();
  }
  if (absl::StatusOr<std::string> error = JsonString(*reply, kErrorKey); error.ok())
    return absl::InvalidArgumentError(absl::StrCat("ONNX Runtime: ", *error));
  return reply;
}

absl::StatusOr<int64_t> OrtWorker::Load(const std::string& path, int threads) {
  ASSIGN_OR_RETURN(const std::string reply, Request(absl::StrCat(R"({"op": "load", "model": )", JsonQuote(path),
                                                                 R"(, "threads": )", threads, "}")));
  ASSIGN_OR_RETURN(const double id, JsonNumber(reply, "session"));
  return static_cast<int64_t>(id);
}

absl::StatusOr<double> OrtWorker::Run(int64_t session, absl::Duration burst) {
  ASSIGN_OR_RETURN(const std::string reply,
                   Request(absl::StrCat(R"({"op": "run", "session": )", session, R"(, "burst_ms": )",
                                        absl::ToDoubleMilliseconds(burst), "}")));
  ASSIGN_OR_RETURN(const double ms, JsonNumber(reply, "ms"));
  return ms * 1e-3;
}

absl::Status OrtWorker::Release(int64_t session) {
  return Request(absl::StrCat(R"({"op": "release", "session": )", session, "}")).status();
}

absl::StatusOr<OrtWorker::PairMedians> OrtWorker::Compare(const std::string& a, const std::string& b, int threads,
                                                          int pairs, int rounds, bool apart) {
  ASSIGN_OR_RETURN(const std::string reply,
                   Request(absl::StrCat(R"({"op": "compare", "model": )", JsonQuote(a), R"(, "against": )",
                                        JsonQuote(b), R"(, "threads": )", threads, R"(, "pairs": )", pairs,
                                        R"(, "rounds": )", rounds, apart ? R"(, "apart": true)" : "", "}")));
  PairMedians medians;
  ASSIGN_OR_RETURN(medians.a, JsonNumbers(reply, "a_ms"));
  ASSIGN_OR_RETURN(medians.b, JsonNumbers(reply, "b_ms"));
  if (medians.a.size() != static_cast<size_t>(pairs) || medians.b.size() != medians.a.size())
    return Malformed("a_ms", reply);
  for (std::vector<double>* v : {&medians.a, &medians.b})
    for (double& ms : *v) ms *= 1e-3;
  return medians;
}

absl::StatusOr<double> JsonNumber(absl::string_view json, absl::string_view key) {
  ASSIGN_OR_RETURN(absl::string_view text, ValueText(json, key));
  const size_t end = text.find_first_of(",}]");
  double value;
  if (end == absl::string_view::npos ||
      !absl::SimpleAtod(absl::StripTrailingAsciiWhitespace(text.substr(0, end)), &value))
    return Malformed(key, json);
  return value;
}

absl::StatusOr<std::vector<double>> JsonNumbers(absl::string_view json, absl::string_view key) {
  ASSIGN_OR_RETURN(absl::string_view text, ValueText(json, key));
  const size_t end = text.find(']');
  if (!absl::ConsumePrefix(&text, "[") || end == absl::string_view::npos) return Malformed(key, json);
  std::vector<double> values;
  for (absl::string_view item : absl::StrSplit(text.substr(0, end - 1), ',', absl::SkipWhitespace())) {
    double value;
    if (!absl::SimpleAtod(absl::StripAsciiWhitespace(item), &value)) return Malformed(key, json);
    values.push_back(value);
  }
  return values;
}

absl::StatusOr<std::string> JsonString(absl::string_view json, absl::string_view key) {
  ASSIGN_OR_RETURN(absl::string_view text, ValueText(json, key));
  if (!absl::ConsumePrefix(&text, "\"")) return Malformed(key, json);
  std::string value;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '"') return value;
    if (text[i] == '\\' && i + 1 < text.size()) ++i;  // an escaped character, kept as written
    value.push_back(text[i]);
  }
  return Malformed(key, json);
}

std::string JsonQuote(absl::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out.push_back('\\');
    if (static_cast<unsigned char>(c) < 0x20) {
      absl::StrAppend(&out, " ");  // paths hold no control characters worth keeping
      continue;
    }
    out.push_back(c);
  }
  return out + "\"";
}

}  // namespace taso
