// The MPI team (Open MPI): built only where CMake found MPI (TASO_WITH_MPI).
#include <mpi.h>

#include <chrono>
#include <climits>
#include <cstdlib>
#include <thread>

#include "absl/strings/str_cat.h"
#include "taso/ir/status_macros.h"
#include "team.h"

// An MPI call's error code as a status, returned.
#define RETURN_IF_MPI(call, what) RETURN_IF_ERROR(Check((call), (what)))

namespace taso::gen {

namespace {

constexpr int kTag = 46, kCloseTag = 47;
// Large messages go in pieces an int can count.
constexpr size_t kPiece = size_t{1} << 30;

class MpiTeam : public Team {
 public:
  MpiTeam() {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  // The others wait here for rank 0, sleeping: MPI_Finalize's own wait polls a fifth of
  // a core, taken from rank 0's pruning.
  ~MpiTeam() override {
    if (rank_ == 0) {
      for (int r = 1; r < size_; ++r) MPI_Send(nullptr, 0, MPI_BYTE, r, kCloseTag, MPI_COMM_WORLD);
    } else {
      WaitFor(0, kCloseTag);
      MPI_Recv(nullptr, 0, MPI_BYTE, 0, kCloseTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Finalize();
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  // The length first, then the bytes in pieces.
  absl::Status Send(int to, absl::Span<const char> bytes) override {
    uint64_t n = bytes.size();
    RETURN_IF_MPI(MPI_Send(&n, 1, MPI_UINT64_T, to, kTag, MPI_COMM_WORLD), "send");
    for (size_t at = 0; at < bytes.size(); at += kPiece) {
      const int piece = static_cast<int>(std::min(kPiece, bytes.size() - at));
      RETURN_IF_MPI(MPI_Send(bytes.data() + at, piece, MPI_BYTE, to, kTag, MPI_COMM_WORLD), "send");
    }
    return absl::OkStatus();
  }

  absl::StatusOr<std::vector<char>> Receive(int from) override {
    WaitFor(from);
    uint64_t n = 0;
    RETURN_IF_MPI(MPI_Recv(&n, 1, MPI_UINT64_T, from, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "receive");
    std::vector<char> bytes(n);
    for (size_t at = 0; at < n; at += kPiece) {
      const int piece = static_cast<int>(std::min<size_t>(kPiece, n - at));
      WaitFor(from);
      RETURN_IF_MPI(MPI_Recv(bytes.data() + at, piece, MPI_BYTE, from, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                    "receive");
    }
    return bytes;
  }

  void Abandon(int exit_code) override { MPI_Abort(MPI_COMM_WORLD, exit_code); }

 private:
  // MPI_Recv polls a core while it waits; a rank waiting here for another's walk or
  // pruning leaves the core to it.
  static void WaitFor(int from, int tag = kTag) {
    for (int flag = 0;;) {
      MPI_Iprobe(from, tag, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
      if (flag) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }

  static absl::Status Check(int code, const char* what) {
    if (code == MPI_SUCCESS) return absl::OkStatus();
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    MPI_Error_string(code, text, &length);
    return absl::UnavailableError(absl::StrCat("MPI ", what, ": ", std::string(text, length)));
  }

  int rank_ = 0, size_ = 1;
};

}  // namespace

// Only under mpirun (Open MPI sets OMPI_COMM_WORLD_SIZE): a plain run never starts MPI.
absl::StatusOr<std::unique_ptr<Team>> JoinTeam(int* argc, char*** argv) {
  if (!std::getenv("OMPI_COMM_WORLD_SIZE")) return SoloTeam();
  int provided = 0;
  if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
    return absl::UnavailableError("MPI_Init_thread failed");
  // Errors come back as codes (turned into statuses), not as an abort inside MPI.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  return std::unique_ptr<Team>(new MpiTeam());
}

}  // namespace taso::gen
