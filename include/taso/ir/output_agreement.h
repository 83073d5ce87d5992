// How closely two runs' outputs agree, tensor by tensor: the rule every check of a written
// or optimized model applies (the self-check, the end-to-end check in the target runtime,
// measured runs, taso-run's comparison with the reference kernels).
#pragma once

#include <string>

#include "absl/strings/string_view.h"
#include "taso/ir/executor.h"

namespace taso {

// The largest difference accepted in a tensor, relative to that tensor's own size (its
// largest finite magnitude, at least 1: the floor stands for the rounding of sums larger
// than what they add up to): rewrites and other kernels reorder float sums. Each tensor
// is held to its own size, so a small output beside a large one is checked as closely as
// alone.
inline constexpr double kOutputTolerance = 1e-3;

// Random inputs are drawn at these scales (uniform in [-s, s]): the unit range, and a
// wide one, where what differs only for larger values (a Clip at 6, a path that grows
// with the input's magnitude) shows.
inline constexpr double kInputScales[] = {1.0, 10.0};

// A tensor's size for its tolerance: its largest finite magnitude, at least 1.
double ToleranceScale(const Tensor<float>& t);

// The largest |difference| between two tensors. NaN on both sides at one position agrees
// (random values fed to a square root make them); a NaN on one side only, an infinity
// against anything but the same infinity, or a shape mismatch is an infinite difference.
double TensorDifference(const Tensor<float>& expected, const Tensor<float>& got);

// How far apart two runs' tensors are.
struct OutputAgreement {
  double max_abs = 0;                     // the largest |difference| of any tensor
  double relative = 0;                    // the largest of each tensor's |difference| over its own size
  std::string worst;                      // the tensor whose relative difference is largest
  double worst_abs = 0, worst_scale = 1;  // its |difference| and its size
  double input_scale = 0;                 // the random inputs' range, [-s, s], where the caller says

  bool Agrees() const { return relative <= kOutputTolerance; }  // false on NaN
  // The worse of this and `other` (its figures when its relative difference is larger).
  void Merge(const OutputAgreement& other);
  // "y differs by D{between} for inputs in [-S, S] (tolerated: T, relative to its
  // largest magnitude M)"; the inputs' range where input_scale is set.
  std::string Describe(absl::string_view between = "") const;
};

// Compares every tensor of `expected` with the one of the same name in `got`; a tensor
// missing from either side is an infinite difference.
OutputAgreement CompareOutputs(const TensorMap& expected, const TensorMap& got, double input_scale = 0);

}  // namespace taso
