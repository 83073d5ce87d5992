#include "team.h"

#include <cstdlib>

#include "absl/strings/str_cat.h"

namespace taso::gen {

namespace {

class Solo : public Team {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  absl::Status Send(int to, absl::Span<const char>) override {
    return absl::InternalError(absl::StrCat("a process alone sends to rank ", to));
  }
  absl::StatusOr<std::vector<char>> Receive(int from) override {
    return absl::InternalError(absl::StrCat("a process alone receives from rank ", from));
  }
  void Abandon(int exit_code) override { std::exit(exit_code); }
};

}  // namespace

std::unique_ptr<Team> SoloTeam() { return std::make_unique<Solo>(); }

#ifndef TASO_WITH_MPI
absl::StatusOr<std::unique_ptr<Team>> JoinTeam(int*, char***) {
  if (std::getenv("OMPI_COMM_WORLD_SIZE") && std::atoi(std::getenv("OMPI_COMM_WORLD_SIZE")) > 1)
    return absl::FailedPreconditionError("started by mpirun, but this taso-gen was built without MPI");
  return SoloTeam();
}
#endif

}  // namespace taso::gen
