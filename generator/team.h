// The processes one taso-gen run is spread over (issue 46): the ranks of an MPI job when
// it was started by mpirun (and built with Open MPI), else this process alone. Ranks
// exchange byte strings; those from one rank to another arrive in the order sent. Every
// call is made from one thread of each process.
#pragma once

#include <cstring>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace taso::gen {

class Team {
 public:
  virtual ~Team() = default;
  virtual int rank() const = 0;  // 0 .. size() - 1
  virtual int size() const = 0;
  // Blocks until `bytes` can be reused.
  virtual absl::Status Send(int to, absl::Span<const char> bytes) = 0;
  // The next bytes `from` sent; waits without spinning a core.
  virtual absl::StatusOr<std::vector<char>> Receive(int from) = 0;
  // Ends every rank at once, after this one met an error the others cannot know of.
  virtual void Abandon(int exit_code) = 0;
};

// This process alone.
std::unique_ptr<Team> SoloTeam();

// The MPI job this process was started in by mpirun, else SoloTeam(). Lasts as long as
// the process: MPI ends when the team is destroyed.
absl::StatusOr<std::unique_ptr<Team>> JoinTeam(int* argc, char*** argv);

// Trivially copyable values to and from the bytes a team sends.
template <typename T>
absl::Span<const char> AsBytes(absl::Span<const T> values) {
  return {reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T)};
}
template <typename T>
std::vector<T> FromBytes(const std::vector<char>& bytes) {
  std::vector<T> out(bytes.size() / sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), bytes.data(), out.size() * sizeof(T));
  return out;
}

}  // namespace taso::gen
