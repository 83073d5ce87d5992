// Temporary folders: removed with their object, and by a signal that ends the process.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "taso/ir/temporary_folder.h"
#include "test_util.h"

namespace fs = std::filesystem;

namespace {

// In a child: ignores SIGHUP where `ignore_hangup`, has the handled signals remove its
// folders, makes one in `parent` with a file in it, writes its path to `report` and waits
// to be signalled. Exits 1 where any step fails.
[[noreturn]] void HoldFolderUntilSignalled(const fs::path& parent, int report, bool ignore_hangup) {
  // As a tool started in the foreground has them, whatever this test's runner ignores.
  for (int handled : {SIGINT, SIGTERM, SIGHUP}) signal(handled, SIG_DFL);
  if (ignore_hangup) signal(SIGHUP, SIG_IGN);
  taso::RemoveTemporaryFoldersOnSignal();
  absl::StatusOr<taso::TemporaryFolder> folder = taso::TemporaryFolder::Make(parent, "held_");
  if (!folder.ok()) _exit(1);
  // A file, and folders within it (as the end-to-end check's runs/inputs).
  std::error_code error;
  fs::create_directories(fs::path(folder->path()) / "runs" / "inputs", error);
  for (const char* name : {"/weights.data", "/runs/inputs/t0.bin"})
    if (FILE* f = fopen((folder->path() + name).c_str(), "w")) {
      fputs("bytes", f);
      fclose(f);
    }
  const std::string line = folder->path() + "\n";
  if (write(report, line.data(), line.size()) != static_cast<ssize_t>(line.size())) _exit(1);
  for (;;) pause();
}

struct HeldFolder {
  pid_t child;
  std::string path;
};

HeldFolder StartChildHoldingFolder(const fs::path& parent, bool ignore_hangup) {
  int pipe_fds[2];
  REQUIRE(pipe(pipe_fds) == 0);
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    close(pipe_fds[0]);
    HoldFolderUntilSignalled(parent, pipe_fds[1], ignore_hangup);
  }
  close(pipe_fds[1]);
  std::string path;
  char c;
  while (read(pipe_fds[0], &c, 1) == 1 && c != '\n') path += c;
  close(pipe_fds[0]);
  return {child, path};
}

}  // namespace

TEST_CASE("A temporary folder is removed with its object, and kept where the object is moved") {
  const fs::path parent = taso::testing::TempDir("temporary_folder_object");
  std::string path;
  {
    absl::StatusOr<taso::TemporaryFolder> made = taso::TemporaryFolder::Make(parent, "own_");
    REQUIRE(made.ok());
    path = made->path();
    CHECK(fs::path(path).parent_path() == parent);
    CHECK(fs::path(path).filename().string().rfind("own_", 0) == 0);
    taso::testing::WriteFile(fs::path(path) / "model.onnx", "bytes");
    taso::TemporaryFolder moved = *std::move(made);
    CHECK(made->empty());
    CHECK(moved.path() == path);
    CHECK(fs::exists(fs::path(path) / "model.onnx"));
  }
  CHECK_FALSE(fs::exists(path));
}

TEST_CASE("A temporary folder that cannot be made is an error naming the place") {
  const fs::path parent = taso::testing::TempDir("temporary_folder_missing") / "missing";
  absl::StatusOr<taso::TemporaryFolder> made = taso::TemporaryFolder::Make(parent, "own_");
  REQUIRE_FALSE(made.ok());
  CHECK_THAT(std::string(made.status().message()),
             Catch::Contains("cannot make a folder in '" + parent.string() + "'") &&
                 Catch::Contains("No such file or directory"));

  taso::testing::ScopedEnv tmpdir("TMPDIR", parent.string());
  absl::StatusOr<taso::TemporaryFolder> in_temp = taso::TemporaryFolder::MakeInTemp("own_");
  REQUIRE_FALSE(in_temp.ok());
  CHECK_THAT(std::string(in_temp.status().message()),
             Catch::StartsWith("no temporary folder: TMPDIR is '" + parent.string() + "'"));
}

TEST_CASE("A signal that ends the process removes its temporary folders first") {
  const fs::path parent = taso::testing::TempDir("temporary_folder_signal");
  // This process's own: each child has a copy of the folders registered, and leaves it.
  absl::StatusOr<taso::TemporaryFolder> own = taso::TemporaryFolder::Make(parent, "own_");
  REQUIRE(own.ok());
  for (int signal : {SIGTERM, SIGINT, SIGHUP}) {
    const HeldFolder held = StartChildHoldingFolder(parent, /*ignore_hangup=*/false);
    REQUIRE(fs::exists(fs::path(held.path) / "runs" / "inputs" / "t0.bin"));
    kill(held.child, signal);
    const int status = taso::testing::WaitForExit(held.child, 30);
    REQUIRE(status != -1);
    CHECK(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == signal);
    CHECK_FALSE(fs::exists(held.path));
  }
  CHECK(fs::exists(own->path()));
}

TEST_CASE("A signal the process was started ignoring stays ignored") {
  const fs::path parent = taso::testing::TempDir("temporary_folder_ignored");
  const HeldFolder held = StartChildHoldingFolder(parent, /*ignore_hangup=*/true);
  kill(held.child, SIGHUP);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  CHECK(waitpid(held.child, nullptr, WNOHANG) == 0);  // still running
  CHECK(fs::exists(held.path));
  kill(held.child, SIGTERM);
  const int status = taso::testing::WaitForExit(held.child, 30);
  REQUIRE(status != -1);
  CHECK(WTERMSIG(status) == SIGTERM);
  CHECK_FALSE(fs::exists(held.path));
}

TEST_CASE("A folder a killed run left is removed when the next is made beside it") {
  const fs::path parent = taso::testing::TempDir("temporary_folder_killed");
  auto age = [](const std::string& folder) {
    fs::last_write_time(fs::path(folder) / ".owner", fs::file_time_type::clock::now() - std::chrono::minutes(2));
  };
  const HeldFolder killed = StartChildHoldingFolder(parent, /*ignore_hangup=*/false);
  kill(killed.child, SIGKILL);  // no handler runs: the folder stays
  REQUIRE(taso::testing::WaitForExit(killed.child, 30) != -1);
  REQUIRE(fs::exists(killed.path));
  age(killed.path);
  const HeldFolder just_killed = StartChildHoldingFolder(parent, /*ignore_hangup=*/false);
  kill(just_killed.child, SIGKILL);  // its owner file is new: it may be one being made
  REQUIRE(taso::testing::WaitForExit(just_killed.child, 30) != -1);
  const HeldFolder alive = StartChildHoldingFolder(parent, /*ignore_hangup=*/false);
  age(alive.path);                                   // a long run's folder: old, but its owner holds the lock
  const fs::path not_ours = parent / "held_abcdef";  // no owner file: nothing says it is left
  fs::create_directory(not_ours);
  // An old, unlocked owner file of another machine (a shared file system): its lock, if
  // held there, may not be seen here.
  const fs::path other_host = parent / "held_remote";
  fs::create_directory(other_host);
  std::ofstream(other_host / ".owner") << "another-machine\n";
  age(other_host.string());
  // A link of that name to a folder the next run would take for one left: not followed.
  const HeldFolder linked_to = StartChildHoldingFolder(parent / "..", /*ignore_hangup=*/false);
  kill(linked_to.child, SIGKILL);
  REQUIRE(taso::testing::WaitForExit(linked_to.child, 30) != -1);
  age(linked_to.path);
  fs::create_directory_symlink(linked_to.path, parent / "held_linked");

  absl::StatusOr<taso::TemporaryFolder> made = taso::TemporaryFolder::Make(parent, "held_");
  REQUIRE(made.ok());
  CHECK_FALSE(fs::exists(killed.path));
  CHECK(fs::exists(just_killed.path));
  CHECK(fs::exists(alive.path));
  CHECK(fs::exists(not_ours));
  CHECK(fs::exists(other_host));
  CHECK(fs::exists(fs::path(linked_to.path) / "weights.data"));
  fs::remove(parent / "held_linked");
  fs::remove_all(linked_to.path);
  // Folders of another prefix are left alone, even one this prefix begins.
  age(just_killed.path);
  REQUIRE(taso::TemporaryFolder::Make(parent, "hel").ok());
  CHECK(fs::exists(just_killed.path));
  REQUIRE(taso::TemporaryFolder::Make(parent, "held_").ok());
  CHECK_FALSE(fs::exists(just_killed.path));

  kill(alive.child, SIGTERM);
  CHECK(taso::testing::WaitForExit(alive.child, 30) != -1);
  CHECK_FALSE(fs::exists(alive.path));
}
