#include "conv_float.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "kernel_threads.h"
#include "taso/ir/parallel.h"
#include "taso/ir/scalar_domain.h"

namespace taso::ops {
namespace {

// Output channels and positions per register block: 4 x 8 accumulators fill eight SSE
// registers, and the compiler keeps them there.
constexpr int64_t kBlockRows = 4;
constexpr int64_t kBlockCols = 8;
// Patch tiles of about this many floats stay in the L2 cache while every block of output
// channels reads them.
constexpr int64_t kTileFloats = 64 * 1024;

// A row-major matrix view: element (r, j) at data[r * stride + j].
struct Matrix {
  const float* data;
  int64_t stride;
};

// Four floats in an SSE register; the compiler's vector type keeps IEEE single-precision
// arithmetic lane by lane, so each lane sums as a scalar would.
typedef float Lanes __attribute__((vector_size(16)));
constexpr int64_t kLanes = 4;

Lanes LoadLanes(const float* p) {
  Lanes v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// out(r, j) = init[r] + sum over kk in order of a(r, kk) * b(kk, j), for r < R, j < C.
template <int64_t R, int64_t C>
void MultiplyBlock(Matrix a, Matrix b, int64_t depth, const float* init, float* out, int64_t out_stride) {
  constexpr int64_t kVectors = C / kLanes;
  Lanes acc[R][kVectors];
  for (int64_t r = 0; r < R; ++r)
    for (int64_t v = 0; v < kVectors; ++v) acc[r][v] = Lanes{} + init[r];
  for (int64_t kk = 0; kk < depth; ++kk) {
    Lanes brow[kVectors];
    for (int64_t v = 0; v < kVectors; ++v) brow[v] = LoadLanes(b.data + kk * b.stride + v * kLanes);
    for (int64_t r = 0; r < R; ++r) {
      const Lanes av = Lanes{} + a.data[r * a.stride + kk];
      for (int64_t v = 0; v < kVectors; ++v) acc[r][v] += av * brow[v];
    }
  }
  for (int64_t r = 0; r < R; ++r)
    for (int64_t v = 0; v < kVectors; ++v) std::memcpy(out + r * out_stride + v * kLanes, &acc[r][v], sizeof(Lanes));
}

// The same for blocks at the edges, of any size up to kBlockRows x kBlockCols.
void MultiplyEdgeBlock(Matrix a, Matrix b, int64_t depth, const float* init, float* out, int64_t out_stride,
                       int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    float acc[kBlockCols];
    std::fill(acc, acc + cols, init[r]);
    for (int64_t kk = 0; kk < depth; ++kk) {
      const float av = a.data[r * a.stride + kk];
      const float* brow = b.data + kk * b.stride;
      for (int64_t j = 0; j < cols; ++j) acc[j] += av * brow[j];
    }
    std::copy(acc, acc + cols, out + r * out_stride);
  }
}

// out[rows, cols] = init + a[rows, depth] . b[depth, cols], each sum in order of depth.
void MultiplyInOrder(Matrix a, Matrix b, int64_t depth, const float* init, float* out, int64_t out_stride, int64_t rows,
                     int64_t cols) {
  for (int64_t r = 0; r < rows; r += kBlockRows) {
    const Matrix a_rows{a.data + r * a.stride, a.stride};
    const int64_t block_rows = std::min(kBlockRows, rows - r);
    for (int64_t j = 0; j < cols; j += kBlockCols) {
      const Matrix b_cols{b.data + j, b.stride};
      float* o = out + r * out_stride + j;
      const int64_t block_cols = std::min(kBlockCols, cols - j);
      if (block_rows == kBlockRows && block_cols == kBlockCols)
        MultiplyBlock<kBlockRows, kBlockCols>(a_rows, b_cols, depth, init + r, o, out_stride);
      else
        MultiplyEdgeBlock(a_rows, b_cols, depth, init + r, o, out_stride, block_rows, block_cols);
    }
  }
}

// True where each output position reads its input position alone: the patches are the
// input itself.
bool ReadsInputAsIs(const ConvGeometry& g) {
  const Window2D& k = g.win;
  return k.kh == 1 && k.kw == 1 && k.sh == 1 && k.sw == 1 && k.pt == 0 && k.pl == 0 && g.oh == g.h && g.ow == g.w;
}

// patches[kk, j] for kk = (ci, ky, kx) of one group's input channels and j the output
// positions [first, first + cols): the input the tap reads there, or zero outside the image.
void GatherPatches(const ConvGeometry& g, const float* x_group, int64_t first, int64_t cols, float* patches) {
  const Window2D& k = g.win;
  float* row = patches;
  for (int64_t ci = 0; ci < g.cg; ++ci) {
    const float* image = x_group + ci * g.h * g.w;
    for (int64_t ky = 0; ky < k.kh; ++ky)
      for (int64_t kx = 0; kx < k.kw; ++kx, row += cols) {
        int64_t oy = first / g.ow, ox = first % g.ow;
        for (int64_t j = 0; j < cols; ++j) {
          const int64_t iy = oy * k.sh - k.pt + ky * k.dh, ix = ox * k.sw - k.pl + kx * k.dw;
          row[j] = iy >= 0 && iy < g.h && ix >= 0 && ix < g.w ? image[iy * g.w + ix] : 0.0f;
          if (++ox == g.ow) ox = 0, ++oy;
        }
      }
  }
}

// One convolution cut into tiles of output positions, each of one image and group: tiles
// are independent (each writes its own outputs), so threads take them in any order and the
// floats stay the same.
class TiledConvolution {
 public:
  TiledConvolution(const ConvGeometry& g, const float* x, const float* w, const float* bias, bool relu, float* y)
      : g_(g), x_(x), w_(w), relu_(relu), y_(y), init_(g.o, 0.0f) {
    if (bias) std::copy(bias, bias + g.o, init_.begin());
    const double multiply_adds = static_cast<double>(g.n) * g.o * positions_ * depth_;
    threads_ = KernelThreads(multiply_adds);
    // Tiles small enough for the L2 cache, and for every thread to have some.
    const int64_t fits_cache = kTileFloats / depth_ / kBlockCols * kBlockCols;
    const int64_t per_thread = RoundUp(CeilDiv(positions_ * g.n * g.group, threads_), kBlockCols);
    tile_ = std::min(positions_, std::max(kBlockCols, std::min(fits_cache, per_thread)));
    tiles_per_image_ = CeilDiv(positions_, tile_);
  }

  void Run() {
    std::vector<std::vector<float>> patches(threads_, std::vector<float>(as_is_ ? 0 : depth_ * tile_));
    ParallelForThreads(g_.n * g_.group * tiles_per_image_, threads_,
                       [&](int thread, size_t tile) { RunTile(static_cast<int64_t>(tile), patches[thread]); });
  }

 private:
  static int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
  static int64_t RoundUp(int64_t a, int64_t b) { return CeilDiv(a, b) * b; }

  void RunTile(int64_t tile, std::vector<float>& patches) const {
    const int64_t image_group = tile / tiles_per_image_, n = image_group / g_.group, grp = image_group % g_.group;
    const int64_t first = tile % tiles_per_image_ * tile_, cols = std::min(tile_, positions_ - first);
    const float* x_group = x_ + (n * g_.c + grp * g_.cg) * g_.h * g_.w;
    float* out = y_ + (n * g_.o + grp * og_) * positions_ + first;
    Matrix b{x_group + first, positions_};
    if (!as_is_) {
      GatherPatches(g_, x_group, first, cols, patches.data());
      b = Matrix{patches.data(), cols};
    }
    MultiplyInOrder(Matrix{w_ + grp * og_ * depth_, depth_}, b, depth_, init_.data() + grp * og_, out, positions_, og_,
                    cols);
    if (relu_)
      for (int64_t r = 0; r < og_; ++r)
        for (int64_t j = 0; j < cols; ++j) out[r * positions_ + j] = Domain<float>::Relu(out[r * positions_ + j]);
  }

  const ConvGeometry& g_;
  const float *x_, *w_;
  const bool relu_;
  float* y_;
  std::vector<float> init_;  // the bias, or zeros
  const int64_t og_ = g_.o / g_.group, depth_ = g_.cg * g_.win.kh * g_.win.kw, positions_ = g_.oh * g_.ow;
  const bool as_is_ = ReadsInputAsIs(g_);
  int threads_;
  int64_t tile_, tiles_per_image_;
};

}  // namespace

bool ConvolveFloatPays(const ConvGeometry& g) { return g.o / g.group >= 4 * kBlockRows; }

void ConvolveFloat(const ConvGeometry& g, const float* x, const float* w, const float* bias, bool relu, float* y) {
  TiledConvolution(g, x, w, bias, relu, y).Run();
}

}  // namespace taso::ops
