// Writing the optimized model so that the file written is the file checked: it is exported
// into a folder beside the destination (StageCheckedModel), validated
// (ValidateWrittenModel), run in the target's runtime against the input file on the same
// random inputs, output by output at each of kInputScales, and only then moved to the
// destination (StagedModel::MoveIntoPlace). A difference, or a written file the runtime
// cannot run, leaves nothing at the destination.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "taso/backends/available_memory.h"
#include "taso/ir/temporary_folder.h"
#include "taso/onnx/onnx_io.h"
#include "taso/pipeline/pipeline.h"

namespace taso {

// Writes a model to a path (ExportOnnxFile; tests plant faults in the written file here).
using ModelWriter = std::function<absl::Status(const OnnxModel& model, const std::string& path)>;

struct WriteRequest {
  std::string input_path;             // the file the model was imported from
  const OnnxModel* input = nullptr;   // as imported (its inputs' sizes are the ones run)
  const OnnxModel* output = nullptr;  // the model to write
  std::string destination;
  Target target = Target::kOrt;
  uint64_t seed = 1;    // of the random inputs
  int ort_threads = 0;  // ONNX Runtime's intra-op threads (0: its default)
  // How the written file is read back to run on our executors (cpu and cuda targets).
  ImportOptions import_options;
  // Symbolic dimensions the written file keeps (by SymbolicDim::Key) with another size
  // to run both files at too, besides the sizes the input was built at (ort target).
  std::map<std::string, int64_t> other_sizes;
  // Other sizes to run both files at where a dimension is 0 (an empty key/value cache:
  // a term of a kept sum at 0), each only where the input file runs there.
  std::vector<std::map<std::string, int64_t>> empty_sizes;
  std::string ort_runner;  // tools/ort/ort_run.js, for ValidateWrittenModel
  // Off (--skip-self-check, for models too large to run): the file is validated only.
  bool run_end_to_end = true;
  ModelWriter writer;  // empty: ExportOnnxFile
  // The memory an ONNX Runtime session may take (ort target; nullopt: not known). Where a
  // session of the files would not fit, neither is run and end_to_end.not_run says why.
  std::function<std::optional<int64_t>()> available_memory = AvailableMemoryBytes;
};

struct WrittenModel {
  std::string validation;  // what ValidateWrittenModel said
  EndToEndCheck end_to_end;
};

// A model written and checked in its staging folder, which goes with it unless the model
// was moved into place.
class StagedModel {
 public:
  const WrittenModel& checks() const { return checks_; }
  // Whether the weights were written to a file beside the model, ExternalDataPath: as the
  // input's were, or because the model is too large for one file.
  bool external_data() const { return external_data_; }
  // Moves the file (and its external data) to the destination; where that fails,
  // nothing is left there.
  absl::Status MoveIntoPlace();

 private:
  friend absl::StatusOr<StagedModel> StageCheckedModel(const WriteRequest& request);
  StagedModel(TemporaryFolder folder, std::string staged, const WriteRequest& request);
  TemporaryFolder folder_;  // holds staged_ until the model is moved, removed with this object
  std::string staged_, destination_;
  bool external_data_ = false;
  WrittenModel checks_;
};

// Fails, leaving nothing behind, when the model cannot be written or validated, when the
// target's runtime cannot run the written file, or when an output differs from the input
// file's beyond kOutputTolerance (the error names the output, the difference and the
// inputs' range). Where the runtime cannot run the input file itself, or a session of
// the files would not fit in the memory available, nothing is compared and
// end_to_end.not_run says why.
absl::StatusOr<StagedModel> StageCheckedModel(const WriteRequest& request);

}  // namespace taso
