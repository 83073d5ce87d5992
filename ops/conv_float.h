// The float reference convolution, fast enough to self-check large networks in seconds.
#pragma once

#include <cstdint>

#include "op_util.h"

namespace taso::ops {

// A grouped 2-D convolution's sizes: input [n, c, h, w], weights [o, cg, kh, kw] with
// cg = c / group, output [n, o, oh, ow].
struct ConvGeometry {
  int64_t n, c, h, w, o, cg, oh, ow, group;
  Window2D win;
};

// True where ConvolveFloat is faster than the direct loops: with 16 output channels or more
// per group (not for depthwise or narrow groups, whose patches cost more than they save).
bool ConvolveFloatPays(const ConvGeometry& g);

// y = the convolution of x by weights w, plus bias (null: none), then relu where asked.
// Computed as the weights times the input's patches, a tile of output positions at a time
// (tiles shared among threads where the convolution is large), a block of output channels
// by positions held in registers. Each output is summed in the
// order of the direct definition: the bias (or zero), then weight x input over (input
// channel, kernel row, kernel column) in turn, so the floats are the generic kernel's. A
// tap outside the image adds a zero product where the generic kernel skips it: that
// changes no value but the sign of a zero (or gives NaN for an infinite weight there).
void ConvolveFloat(const ConvGeometry& g, const float* x, const float* w, const float* bias, bool relu, float* y);

}  // namespace taso::ops
