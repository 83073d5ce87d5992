// Operator library: reference kernels against naive formulas written independently here,
// algebraic identities in both scalar domains, and the shape errors.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <functional>
#include <limits>
#include <set>

#include "taso/ir/executor.h"
#include "taso/ir/ops/names.h"
#include "taso/ir/rng.h"
#include "taso/ir/scalar_domain.h"
#include "test_util.h"

using namespace taso;
using taso::testing::Op;
using taso::testing::RandomTensor;

namespace {

Tensor<uint32_t> RandomU32(Shape shape, uint64_t seed) {
  Rng rng(seed);
  Tensor<uint32_t> t(std::move(shape));
  for (auto& v : t.data) v = rng.NextU32();
  return t;
}

template <typename S>
std::vector<Tensor<S>> Run(const std::string& op, const Params& p, std::vector<KernelInput<S>> in) {
  auto out = RunOp<S>(*Op(op), p, in);
  INFO(op << ": " << out.status().ToString());
  REQUIRE(out.ok());
  return *out;
}

std::string ErrorOf(const std::string& op, const Params& p, std::vector<Shape> shapes) {
  std::vector<InputInfo> in;
  for (auto& s : shapes) in.push_back(InputInfo{true, DataType::kFloat32, s});
  auto r = Op(op)->InferTypes(p, in);
  return r.ok() ? "" : std::string(r.status().message());
}

// Direct definition of grouped, strided, padded, dilated convolution: each output the bias
// (zero without one), then its products over (input channel, kernel row, kernel column) in
// turn.
template <typename S>
Tensor<S> NaiveConv(const Tensor<S>& x, const Tensor<S>& w, int64_t group, std::vector<int64_t> s,
                    std::vector<int64_t> pads, std::vector<int64_t> d, const Tensor<S>* bias = nullptr) {
  const int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
  const int64_t O = w.shape[0], CG = w.shape[1], KH = w.shape[2], KW = w.shape[3];
  const int64_t OH = (H + pads[0] + pads[2] - d[0] * (KH - 1) - 1) / s[0] + 1;
  const int64_t OW = (W + pads[1] + pads[3] - d[1] * (KW - 1) - 1) / s[1] + 1;
  Tensor<S> y(Shape{N, O, OH, OW});
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < O; ++o)
      for (int64_t oy = 0; oy < OH; ++oy)
        for (int64_t ox = 0; ox < OW; ++ox) {
          S acc = bias ? bias->data[o] : Domain<S>::Zero();
          for (int64_t ci = 0; ci < CG; ++ci)
            for (int64_t ky = 0; ky < KH; ++ky)
              for (int64_t kx = 0; kx < KW; ++kx) {
                const int64_t iy = oy * s[0] - pads[0] + ky * d[0], ix = ox * s[1] - pads[1] + kx * d[1];
                if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                const int64_t c = (o / (O / group)) * CG + ci;
                acc += x.data[((n * C + c) * H + iy) * W + ix] * w.data[((o * CG + ci) * KH + ky) * KW + kx];
              }
          y.data[((n * O + o) * OH + oy) * OW + ox] = acc;
        }
  (void)C;
  return y;
}

void RequireClose(const Tensor<float>& a, const Tensor<float>& b, double tol = 1e-4) {
  REQUIRE(a.shape == b.shape);
  for (size_t i = 0; i < a.data.size(); ++i) REQUIRE(std::fabs(a.data[i] - b.data[i]) <= tol);
}

// A convolution's input and weight shapes, groups, strides, pads and dilations.
struct ConvCase {
  Shape x, w;
  int64_t group;
  std::vector<int64_t> s, pads, d;
};

Params ConvParams(std::vector<int64_t> strides, std::vector<int64_t> pads, int64_t group,
                  std::vector<int64_t> dil = {1, 1}) {
  return Params().Set("strides", strides).Set("pads", pads).Set("group", group).Set("dilations", dil);
}

// Runs `body` in a child process: whether the child aborted, and what it wrote to stderr.
struct ChildResult {
  bool aborted = false;
  std::string stderr_text;
};
ChildResult RunInChild(const std::function<void()>& body) {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  const pid_t pid = fork();
  if (pid == 0) {
    std::signal(SIGABRT, SIG_DFL);  // the test framework's handler would report the abort as a failure
    dup2(fds[1], STDERR_FILENO);
    close(fds[0]);
    body();
    _exit(0);
  }
  close(fds[1]);
  ChildResult result;
  char buf[256];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) result.stderr_text.append(buf, n);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  result.aborted = WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
  return result;
}

}  // namespace

TEST_CASE("Conv2D matches the direct definition in both domains") {
  const std::vector<ConvCase> cases = {
      {{1, 3, 7, 7}, {4, 3, 3, 3}, 1, {1, 1}, {1, 1, 1, 1}, {1, 1}},
      {{2, 4, 9, 8}, {6, 2, 3, 1}, 2, {2, 1}, {0, 1, 2, 0}, {1, 1}},
      {{1, 4, 10, 10}, {4, 1, 3, 3}, 4, {1, 2}, {2, 2, 2, 2}, {2, 2}},
      {{1, 2, 5, 6}, {3, 2, 5, 5}, 1, {3, 3}, {2, 2, 2, 2}, {1, 1}},
  };
  uint64_t seed = 1;
  for (const ConvCase& c : cases) {
    const Params p = ConvParams(c.s, c.pads, c.group, c.d);
    auto xf = RandomTensor(c.x, seed++), wf = RandomTensor(c.w, seed++);
    RequireClose(Run<float>(op_names::kConv2D, p, {&xf, &wf})[0], NaiveConv(xf, wf, c.group, c.s, c.pads, c.d));
    auto xu = RandomU32(c.x, seed++), wu = RandomU32(c.w, seed++);
    REQUIRE(Run<uint32_t>(op_names::kConv2D, p, {&xu, &wu})[0].data ==
            NaiveConv(xu, wu, c.group, c.s, c.pads, c.d).data);
  }
}

// The float kernel multiplies weights by the input's patches, in tiles and register blocks
// (ops/conv_float.cc), for 16 output channels per group or more: the floats must be those of
// the direct definition, summed in the same order. The cases cover the edges of its blocks
// (channel counts not multiples of 4, positions not multiples of 8), several tiles, the
// 1x1 convolution that reads the input as it is, strides, dilations, pads on one side,
// groups, the bias and relu, and a convolution large enough to be shared among threads.
TEST_CASE("Conv2D's float kernel gives the direct definition's floats") {
  const std::vector<ConvCase> cases = {
      {{1, 3, 9, 11}, {16, 3, 3, 3}, 1, {1, 1}, {1, 1, 1, 1}, {1, 1}},
      {{2, 8, 7, 5}, {18, 8, 1, 1}, 1, {1, 1}, {0, 0, 0, 0}, {1, 1}},
      {{1, 8, 9, 9}, {19, 8, 1, 1}, 1, {2, 2}, {0, 0, 0, 0}, {1, 1}},
      {{1, 32, 12, 13}, {34, 16, 3, 3}, 2, {2, 1}, {0, 2, 1, 0}, {2, 1}},
      {{1, 4, 30, 30}, {17, 4, 5, 5}, 1, {1, 1}, {2, 2, 2, 2}, {1, 1}},
      {{1, 2, 1, 1}, {16, 2, 3, 3}, 1, {1, 1}, {1, 1, 1, 1}, {1, 1}},
      {{2, 64, 24, 20}, {64, 64, 3, 3}, 1, {1, 1}, {1, 1, 1, 1}, {1, 1}},  // on several threads
  };
  uint64_t seed = 100;
  for (const ConvCase& c : cases) {
    INFO("x " << ShapeToString(c.x) << ", w " << ShapeToString(c.w));
    const auto x = RandomTensor(c.x, seed++), w = RandomTensor(c.w, seed++), b = RandomTensor({c.w[0]}, seed++);
    const Params p = ConvParams(c.s, c.pads, c.group, c.d);
    const auto expected = NaiveConv(x, w, c.group, c.s, c.pads, c.d, &b);
    const auto got = Run<float>(op_names::kConv2D, p, {&x, &w, &b})[0];
    REQUIRE(got.shape == expected.shape);
    REQUIRE(got.data == expected.data);
    const auto relu = Run<float>(op_names::kConv2D, Params(p).Set("activation", "relu"), {&x, &w, &b})[0];
    for (size_t i = 0; i < relu.data.size(); ++i) REQUIRE(relu.data[i] == std::max(expected.data[i], 0.0f));
  }
}

TEST_CASE("Conv2D bias and relu activation") {
  auto x = RandomTensor({1, 2, 5, 5}, 3), w = RandomTensor({3, 2, 3, 3}, 4), b = RandomTensor({3}, 5);
  Params p = ConvParams({1, 1}, {1, 1, 1, 1}, 1);
  auto plain = Run<float>(op_names::kConv2D, p, {&x, &w})[0];
  auto biased = Run<float>(op_names::kConv2D, p, {&x, &w, &b})[0];
  for (int64_t i = 0; i < biased.numel(); ++i) REQUIRE(biased.data[i] == Approx(plain.data[i] + b.data[i / 25]));
  p.Set("activation", "relu");
  auto relu = Run<float>(op_names::kConv2D, p, {&x, &w})[0];
  auto relu_of = Run<float>(op_names::kRelu, {}, {&plain})[0];
  REQUIRE(relu.data == relu_of.data);
}

TEST_CASE("Conv2D grouping modes: dense and depthwise, whatever the channel counts") {
  auto x = RandomTensor({1, 4, 6, 6}, 7);
  auto dw = RandomTensor({4, 1, 3, 3}, 8), dense = RandomTensor({5, 4, 3, 3}, 9);
  Params p = Params().Set("strides", std::vector<int64_t>{1, 1}).Set("padding", "same");
  RequireClose(Run<float>(op_names::kConv2D, Params(p).Set("grouping", "depthwise"), {&x, &dw})[0],
               NaiveConv(x, dw, 4, {1, 1}, {1, 1, 1, 1}, {1, 1}));
  RequireClose(Run<float>(op_names::kConv2D, Params(p).Set("grouping", "dense"), {&x, &dense})[0],
               NaiveConv(x, dense, 1, {1, 1}, {1, 1, 1, 1}, {1, 1}));
  // A kernel that would make a grouped convolution is refused rather than grouped.
  CHECK_THAT(ErrorOf(op_names::kConv2D, Params(p).Set("grouping", "dense"), {{1, 8, 6, 6}, {4, 4, 3, 3}}),
             Catch::Contains("channels per group"));
  CHECK_THAT(ErrorOf(op_names::kConv2D, Params(p).Set("grouping", "depthwise"), {{1, 4, 6, 6}, {4, 2, 3, 3}}),
             Catch::Contains("one kernel of one input channel per channel"));
  // A channel multiplier is a grouped convolution, not a depthwise one in rules.
  CHECK_THAT(ErrorOf(op_names::kConv2D, Params(p).Set("grouping", "depthwise"), {{1, 4, 6, 6}, {8, 1, 3, 3}}),
             Catch::Contains("one kernel of one input channel per channel"));
  CHECK_THAT(ErrorOf(op_names::kConv2D, Params(p).Set("grouping", "sparse"), {{1, 4, 6, 6}, {4, 4, 3, 3}}),
             Catch::Contains("unknown grouping"));
}

TEST_CASE("MatMul broadcasts batch dimensions") {
  auto a = RandomTensor({2, 1, 3, 4}, 1), b = RandomTensor({3, 4, 5}, 2);
  auto c = Run<float>(op_names::kMatMul, {}, {&a, &b})[0];
  REQUIRE(c.shape == Shape{2, 3, 3, 5});
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j)
      for (int64_t m = 0; m < 3; ++m)
        for (int64_t n = 0; n < 5; ++n) {
          double acc = 0;
          for (int64_t k = 0; k < 4; ++k) acc += a.data[(i * 3 + m) * 4 + k] * b.data[(j * 4 + k) * 5 + n];
          REQUIRE(c.data[((i * 3 + j) * 3 + m) * 5 + n] == Approx(acc).margin(1e-5));
        }
}

// The products sum each element's terms in the order k = 0, 1, ..., exactly as this loop
// does, however many rows the kernel groups (fingerprints and the self-check rely on
// results that do not depend on the grouping): compared bit for bit.
template <typename S>
S ProductElement(const Tensor<S>& a, const Tensor<S>& b, bool ta, bool tb, int64_t i, int64_t j) {
  const int64_t m = ta ? a.shape[1] : a.shape[0], k = ta ? a.shape[0] : a.shape[1], n = tb ? b.shape[0] : b.shape[1];
  S acc = Domain<S>::Zero();
  for (int64_t kk = 0; kk < k; ++kk)
    acc += (ta ? a.data[kk * m + i] : a.data[i * k + kk]) * (tb ? b.data[j * k + kk] : b.data[kk * n + j]);
  return acc;
}

TEST_CASE("MatMul and Gemm sum each element's products in order, whatever its row") {
  for (int64_t m = 1; m <= 9; ++m) {
    const auto a = RandomTensor({m, 5}, 10 + m), b = RandomTensor({5, 7}, 20 + m);
    const auto c = Run<float>(op_names::kMatMul, {}, {&a, &b})[0];
    const auto au = RandomU32({m, 5}, 30 + m), bu = RandomU32({5, 7}, 40 + m);
    const auto cu = Run<uint32_t>(op_names::kMatMul, {}, {&au, &bu})[0];
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < 7; ++j) {
        CHECK(c.data[i * 7 + j] == ProductElement(a, b, false, false, i, j));
        CHECK(cu.data[i * 7 + j] == ProductElement(au, bu, false, false, i, j));
      }
  }
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      const auto a = RandomTensor(ta ? Shape{5, 6} : Shape{6, 5}, 1),
                 b = RandomTensor(tb ? Shape{7, 5} : Shape{5, 7}, 2);
      const auto y =
          Run<float>(op_names::kGemm, Params().Set("transA", int64_t{ta}).Set("transB", int64_t{tb}), {&a, &b})[0];
      REQUIRE(y.shape == Shape{6, 7});
      for (int64_t i = 0; i < 6; ++i)
        for (int64_t j = 0; j < 7; ++j) CHECK(y.data[i * 7 + j] == ProductElement(a, b, ta, tb, i, j));
    }
}

TEST_CASE("Products large enough for several threads give the same floats as the sum in order") {
  // 203 rows (not a multiple of four), batches of 101 rows, and Gemm's transposed operand:
  // each over kMultiplyAddsPerThread several times, so cut into blocks of rows by thread.
  const auto a = RandomTensor({203, 256}, 1), b = RandomTensor({256, 300}, 2);
  const auto c = Run<float>(op_names::kMatMul, {}, {&a, &b})[0];
  const auto bt = RandomTensor({300, 256}, 3);
  const auto y = Run<float>(op_names::kGemm, Params().Set("transB", int64_t{1}), {&a, &bt})[0];
  int differing = 0;
  for (int64_t i = 0; i < 203; ++i)
    for (int64_t j = 0; j < 300; ++j) {
      differing += c.data[i * 300 + j] != ProductElement(a, b, false, false, i, j);
      differing += y.data[i * 300 + j] != ProductElement(a, bt, false, true, i, j);
    }
  CHECK(differing == 0);
  const auto batched = RandomTensor({3, 101, 256}, 4);
  const auto cb = Run<float>(op_names::kMatMul, {}, {&batched, &b})[0];
  REQUIRE(cb.shape == Shape{3, 101, 300});
  for (int64_t bi = 0; bi < 3; ++bi) {
    Tensor<float> one({101, 256});
    std::copy_n(batched.data.begin() + bi * 101 * 256, 101 * 256, one.data.begin());
    for (int64_t i = 0; i < 101; ++i)
      for (int64_t j = 0; j < 300; ++j)
        differing += cb.data[(bi * 101 + i) * 300 + j] != ProductElement(one, b, false, false, i, j);
  }
  CHECK(differing == 0);
}

TEST_CASE("Element-wise operators broadcast as ONNX does") {
  auto a = RandomTensor({2, 3, 4}, 1), b = RandomTensor({3, 1}, 2);
  auto sum = Run<float>(op_names::kAdd, {}, {&a, &b})[0];
  auto diff = Run<float>(op_names::kSub, {}, {&a, &b})[0];
  REQUIRE(sum.shape == Shape{2, 3, 4});
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j)
      for (int64_t k = 0; k < 4; ++k) {
        REQUIRE(sum.data[(i * 3 + j) * 4 + k] == a.data[(i * 3 + j) * 4 + k] + b.data[j]);
        REQUIRE(diff.data[(i * 3 + j) * 4 + k] == a.data[(i * 3 + j) * 4 + k] - b.data[j]);
      }
  REQUIRE(ErrorOf(op_names::kMul, {}, {{2, 3}, {4, 3}}).find("do not broadcast") != std::string::npos);
}

TEST_CASE("Transpose, Concat and Split move elements where they belong") {
  auto x = RandomTensor({2, 3, 4}, 1);
  auto t = Run<float>(op_names::kTranspose, Params().Set("perm", std::vector<int64_t>{2, 0, 1}), {&x})[0];
  REQUIRE(t.shape == Shape{4, 2, 3});
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j)
      for (int64_t k = 0; k < 4; ++k) REQUIRE(t.data[(k * 2 + i) * 3 + j] == x.data[(i * 3 + j) * 4 + k]);

  auto y = RandomTensor({2, 5, 4}, 2);
  auto cat = Run<float>(op_names::kConcat, Params().Set("axis", int64_t{1}), {&x, &y})[0];
  REQUIRE(cat.shape == Shape{2, 8, 4});
  auto parts =
      Run<float>(op_names::kSplit, Params().Set("axis", int64_t{1}).Set("sizes", std::vector<int64_t>{3, 5}), {&cat});
  REQUIRE(parts.size() == 2);
  REQUIRE(parts[0].data == x.data);
  REQUIRE(parts[1].data == y.data);
}

TEST_CASE("Pooling matches the direct definition, with and without counting padding") {
  auto x = RandomTensor({1, 2, 6, 7}, 9);
  Params p;
  p.Set("kernel", std::vector<int64_t>{3, 3})
      .Set("strides", std::vector<int64_t>{2, 2})
      .Set("pads", std::vector<int64_t>{1, 1, 1, 1});
  auto mx = Run<float>(op_names::kMaxPool, p, {&x})[0];
  auto avg_ex = Run<float>(op_names::kAveragePool, p, {&x})[0];
  auto avg_in = Run<float>(op_names::kAveragePool, Params(p).Set("count_include_pad", int64_t{1}), {&x})[0];
  REQUIRE(mx.shape == Shape{1, 2, 3, 4});
  for (int64_t c = 0; c < 2; ++c)
    for (int64_t oy = 0; oy < 3; ++oy)
      for (int64_t ox = 0; ox < 4; ++ox) {
        float best = -1e30f, sum = 0;
        int inside = 0;
        for (int64_t ky = 0; ky < 3; ++ky)
          for (int64_t kx = 0; kx < 3; ++kx) {
            int64_t iy = oy * 2 - 1 + ky, ix = ox * 2 - 1 + kx;
            if (iy < 0 || iy >= 6 || ix < 0 || ix >= 7) continue;
            float v = x.data[(c * 6 + iy) * 7 + ix];
            best = std::max(best, v);
            sum += v;
            ++inside;
          }
        const int64_t o = (c * 3 + oy) * 4 + ox;
        REQUIRE(mx.data[o] == best);
        REQUIRE(avg_ex.data[o] == Approx(sum / inside));
        REQUIRE(avg_in.data[o] == Approx(sum / 9));
      }
}

TEST_CASE("Identities behind TASO's constant tensors hold in both domains") {
  // Average pooling counting padding == depth-wise convolution with C_pool.
  auto pool_vs_conv = [](auto x) {
    using S = std::decay_t<decltype(x.data[0])>;
    Params pool;
    pool.Set("kernel", std::vector<int64_t>{3, 3})
        .Set("pads", std::vector<int64_t>{1, 1, 1, 1})
        .Set("count_include_pad", int64_t{1});
    auto pooled = Run<S>(op_names::kAveragePool, pool, {&x})[0];
    auto cpool = Run<S>(op_names::kC_pool, Params().Set("shape", std::vector<int64_t>{x.shape[1], 1, 3, 3}), {})[0];
    auto conv = Run<S>(op_names::kConv2D, ConvParams({1, 1}, {1, 1, 1, 1}, x.shape[1]), {&x, &cpool})[0];
    return std::make_pair(pooled, conv);
  };
  auto [pu, cu] = pool_vs_conv(RandomU32({1, 3, 5, 5}, 1));
  REQUIRE(pu.data == cu.data);
  auto [pf, cf] = pool_vs_conv(RandomTensor({1, 3, 5, 5}, 1));
  RequireClose(pf, cf, 1e-5);

  // Convolution with I_conv, matmul with I_matmul and ewmul with I_ewmul are identities.
  auto xu = RandomU32({1, 4, 5, 5}, 2);
  auto iconv = Run<uint32_t>(op_names::kI_conv, Params().Set("shape", std::vector<int64_t>{4, 4, 3, 3}), {})[0];
  REQUIRE(Run<uint32_t>(op_names::kConv2D, ConvParams({1, 1}, {1, 1, 1, 1}, 1), {&xu, &iconv})[0].data == xu.data);
  auto mu = RandomU32({3, 6}, 3);
  auto imm = Run<uint32_t>(op_names::kI_matmul, Params().Set("shape", std::vector<int64_t>{6, 6}), {})[0];
  REQUIRE(Run<uint32_t>(op_names::kMatMul, {}, {&mu, &imm})[0].data == mu.data);
  auto ones = Run<uint32_t>(op_names::kI_ewmul, Params().Set("shape", std::vector<int64_t>{3, 6}), {})[0];
  REQUIRE(Run<uint32_t>(op_names::kMul, {}, {&mu, &ones})[0].data == mu.data);

  // Enlarging a kernel (with the padding grown to match) does not change a convolution.
  auto w = RandomU32({5, 4, 1, 3}, 4);
  auto big = Run<uint32_t>(op_names::kEnlarge, Params().Set("kernel", std::vector<int64_t>{3, 3}), {&w})[0];
  REQUIRE(big.shape == Shape{5, 4, 3, 3});
  auto small = Run<uint32_t>(op_names::kConv2D, ConvParams({1, 1}, {0, 1, 0, 1}, 1), {&xu, &w})[0];
  auto large = Run<uint32_t>(op_names::kConv2D, ConvParams({1, 1}, {1, 1, 1, 1}, 1), {&xu, &big})[0];
  REQUIRE(small.data == large.data);
}

TEST_CASE("The uint32 domain keeps relu and max monotone and idempotent, without linearity") {
  auto x = RandomU32({64}, 7);
  auto r = Run<uint32_t>(op_names::kRelu, {}, {&x})[0];
  REQUIRE(Run<uint32_t>(op_names::kRelu, {}, {&r})[0].data == r.data);
  // relu(a + b) != relu(a) + relu(b) somewhere: relu is not linear in this domain.
  auto y = RandomU32({64}, 8);
  auto sum = Run<uint32_t>(op_names::kAdd, {}, {&x, &y})[0];
  auto relu_sum = Run<uint32_t>(op_names::kRelu, {}, {&sum})[0];
  auto ry = Run<uint32_t>(op_names::kRelu, {}, {&y})[0];
  auto sum_relu = Run<uint32_t>(op_names::kAdd, {}, {&r, &ry})[0];
  REQUIRE(relu_sum.data != sum_relu.data);
  for (uint32_t a : {3u, 9u, 25u, 12345u}) REQUIRE(a * Domain<uint32_t>::OddInverse(a) == 1u);
}

TEST_CASE("Reshape refuses a target shape with more elements than int64 counts") {
  auto shape = TensorData::Int64({2}, {int64_t{1} << 62, 4});
  std::vector<InputInfo> in = {{true, DataType::kFloat32, {4}}, {true, DataType::kInt64, {2}, true, shape.get()}};
  auto t = Op(op_names::kReshape)->InferTypes({}, in);
  REQUIRE_FALSE(t.ok());
  CHECK_THAT(std::string(t.status().message()), Catch::Contains("more elements than int64 counts"));
}

TEST_CASE("Reshape, Flatten, Pad, ReduceMean, Softmax, BatchNormalization, Gemm and Clip") {
  auto x = RandomTensor({2, 3, 4}, 1);
  auto shape = TensorData::Int64({2}, {-1, 4});
  {
    std::vector<InputInfo> in = {{true, DataType::kFloat32, x.shape}, {true, DataType::kInt64, {2}, true, shape.get()}};
    auto t = Op(op_names::kReshape)->InferTypes({}, in);
    REQUIRE(t.ok());
    REQUIRE((*t)[0].shape == Shape{6, 4});
  }
  REQUIRE(Run<float>(op_names::kFlatten, Params().Set("axis", int64_t{2}), {&x})[0].shape == Shape{6, 4});

  auto mean = Run<float>(op_names::kReduceMean, Params().Set("axes", std::vector<int64_t>{-1}), {&x})[0];
  REQUIRE(mean.shape == Shape{2, 3, 1});
  REQUIRE(mean.data[0] == Approx((x.data[0] + x.data[1] + x.data[2] + x.data[3]) / 4));

  auto sm = Run<float>(op_names::kSoftmax, Params().Set("axis", int64_t{1}), {&x})[0];
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t k = 0; k < 4; ++k) {
      double s = 0;
      for (int64_t j = 0; j < 3; ++j) s += sm.data[(i * 3 + j) * 4 + k];
      REQUIRE(s == Approx(1.0));
    }

  auto img = RandomTensor({1, 2, 2, 2}, 3);
  Tensor<float> scale({2}, {2.f, 1.f}), bias({2}, {0.5f, 0.f}), mu({2}, {0.f, 1.f}), var({2}, {1.f, 4.f});
  auto bn =
      Run<float>(op_names::kBatchNormalization, Params().Set("epsilon", 0.0), {&img, &scale, &bias, &mu, &var})[0];
  REQUIRE(bn.data[0] == Approx(img.data[0] * 2 + 0.5));
  REQUIRE(bn.data[4] == Approx((img.data[4] - 1) / 2));

  auto a = RandomTensor({3, 2}, 4), b = RandomTensor({4, 3}, 5), c = RandomTensor({4}, 6);
  auto g = Run<float>(op_names::kGemm,
                      Params().Set("transA", int64_t{1}).Set("transB", int64_t{1}).Set("alpha", 2.0).Set("beta", 0.5),
                      {&a, &b, &c})[0];
  REQUIRE(g.shape == Shape{2, 4});
  double expect = 0;
  for (int k = 0; k < 3; ++k) expect += a.data[k * 2 + 1] * b.data[2 * 3 + k];
  REQUIRE(g.data[1 * 4 + 2] == Approx(2 * expect + 0.5 * c.data[2]));

  Tensor<float> lo({}, {0.f}), hi({}, {0.25f});
  auto clipped = Run<float>(op_names::kClip, {}, {&x, &lo, &hi})[0];
  for (size_t i = 0; i < x.data.size(); ++i) REQUIRE(clipped.data[i] == std::min(std::max(x.data[i], 0.f), 0.25f));
}

TEST_CASE("Bad shapes and parameters get clear errors") {
  const Params conv = ConvParams({1, 1}, {0, 0, 0, 0}, 1);
  CHECK_THAT(ErrorOf(op_names::kConv2D, conv, {{1, 3, 8, 8}, {4, 2, 3, 3}}),
             Catch::Contains("input has 3 channels per group") && Catch::Contains("expects 2 per group"));
  CHECK_THAT(ErrorOf(op_names::kConv2D, ConvParams({1, 1}, {0, 0, 0, 0}, 2), {{1, 3, 8, 8}, {4, 1, 3, 3}}),
             Catch::Contains("does not divide"));
  CHECK_THAT(ErrorOf(op_names::kConv2D, conv, {{1, 3, 2, 2}, {4, 3, 3, 3}}),
             Catch::Contains("larger than the padded input"));
  CHECK_THAT(ErrorOf(op_names::kConv2D, conv, {{3, 8, 8}, {4, 3, 3, 3}}), Catch::Contains("rank 4"));
  CHECK_THAT(ErrorOf(op_names::kMatMul, {}, {{2, 3}, {4, 5}}), Catch::Contains("inner dimensions differ"));
  CHECK_THAT(ErrorOf(op_names::kConcat, Params().Set("axis", int64_t{0}), {{2, 3}, {2, 4}}),
             Catch::Contains("do not agree"));
  CHECK_THAT(ErrorOf(op_names::kConcat, Params().Set("axis", int64_t{5}), {{2, 3}, {2, 3}}),
             Catch::Contains("out of range"));
  CHECK_THAT(ErrorOf(op_names::kConcat, Params().Set("axis", int64_t{0}), {{}, {}}),
             Catch::Contains("out of range for rank 0"));
  CHECK_THAT(ErrorOf(op_names::kSplit, Params().Set("sizes", std::vector<int64_t>{1, 1}), {{3, 2}}),
             Catch::Contains("add up to"));
  CHECK_THAT(ErrorOf(op_names::kTranspose, Params().Set("perm", std::vector<int64_t>{0, 0}), {{2, 2}}),
             Catch::Contains("not a permutation"));
  CHECK_THAT(ErrorOf(op_names::kEnlarge, Params().Set("kernel", std::vector<int64_t>{2, 2}), {{1, 1, 3, 3}}),
             Catch::Contains("cannot enlarge"));
  CHECK_THAT(ErrorOf(op_names::kI_conv, Params().Set("shape", std::vector<int64_t>{2, 2, 2, 2}), {}),
             Catch::Contains("odd"));
  CHECK_THAT(ErrorOf(op_names::kBatchNormalization, {}, {{1, 3, 2, 2}, {3}, {3}, {3}, {4}}),
             Catch::Contains("var must have shape [3]"));
  CHECK_THAT(ErrorOf(op_names::kRelu, {}, {}), Catch::Contains("expects 1 inputs"));
  CHECK_THAT(ErrorOf(op_names::kConv2D, Params(conv).Set("activation", "gelu"), {{1, 3, 8, 8}, {4, 3, 3, 3}}),
             Catch::Contains("unknown activation"));
}

TEST_CASE("Cost metrics count the work") {
  std::vector<InputInfo> in = {{true, DataType::kFloat32, {1, 8, 10, 10}}, {true, DataType::kFloat32, {16, 4, 3, 3}}};
  const Params p = ConvParams({1, 1}, {1, 1, 1, 1}, 2);
  auto out = Op(op_names::kConv2D)->InferTypes(p, in);
  REQUIRE(out.ok());
  auto m = Op(op_names::kConv2D)->Metrics(p, in, *out);
  REQUIRE(m.flops == 2.0 * 16 * 10 * 10 * 4 * 9);
  REQUIRE(m.bytes == 4.0 * (800 + 16 * 4 * 9 + 1600));
}

TEST_CASE("Every library operator is registered once, with a name and a kernel") {
  std::set<std::string> names;
  for (const OpDef* op : OpRegistry::Global().All()) REQUIRE(names.insert(std::string(op->name())).second);
  for (const char* required : {op_names::kConv2D,
                               op_names::kMatMul,
                               op_names::kAdd,
                               op_names::kMul,
                               op_names::kScalarMul,
                               op_names::kRelu,
                               op_names::kSigmoid,
                               op_names::kTanh,
                               op_names::kTranspose,
                               op_names::kConcat,
                               op_names::kSplit,
                               op_names::kMaxPool,
                               op_names::kAveragePool,
                               op_names::kEnlarge,
                               op_names::kC_pool,
                               op_names::kI_conv,
                               op_names::kI_matmul,
                               op_names::kI_ewmul,
                               op_names::kBatchNormalization,
                               op_names::kGemm,
                               op_names::kReshape,
                               op_names::kFlatten,
                               op_names::kSoftmax,
                               op_names::kGlobalAveragePool,
                               op_names::kPad,
                               op_names::kSub,
                               op_names::kDiv,
                               op_names::kPow,
                               op_names::kSqrt,
                               op_names::kErf,
                               op_names::kReduceMean,
                               op_names::kIdentity,
                               op_names::kDropout,
                               op_names::kConstant})
    CHECK(names.count(required) == 1);
}

TEST_CASE("Params getters give the default when absent and abort on another type") {
  const Params p = Params()
                       .Set("axis", int64_t{1})
                       .Set("alpha", 0.5)
                       .Set("padding", "same")
                       .Set("sizes", std::vector<int64_t>{2, 3});
  CHECK(p.Int("missing", 7) == 7);
  CHECK(p.Float("missing", 0.25) == 0.25);
  CHECK(p.Str("missing", "none") == "none");
  CHECK(p.Ints("missing", {4}) == std::vector<int64_t>{4});
  CHECK(p.Floats("missing").empty());
  CHECK(p.Tensor("missing") == nullptr);
  CHECK(p.Int("axis", 7) == 1);
  CHECK(p.Float("alpha") == 0.5);
  CHECK(p.Str("padding") == "same");
  CHECK(p.Ints("sizes") == std::vector<int64_t>{2, 3});

  const ChildResult same_type = RunInChild([&] { (void)p.Int("axis"); });
  CHECK_FALSE(same_type.aborted);
  CHECK(same_type.stderr_text.empty());
  const ChildResult int_of_string = RunInChild([&] { (void)p.Int("padding"); });
  CHECK(int_of_string.aborted);
  CHECK(int_of_string.stderr_text == "taso: parameter 'padding' read as int but holds string\n");
  const ChildResult float_of_int = RunInChild([&] { (void)p.Float("axis", 1.0); });
  CHECK(float_of_int.aborted);
  CHECK(float_of_int.stderr_text == "taso: parameter 'axis' read as float but holds int\n");
  const ChildResult floats_of_ints = RunInChild([&] { (void)p.Floats("sizes"); });
  CHECK(floats_of_ints.aborted);
  CHECK(floats_of_ints.stderr_text == "taso: parameter 'sizes' read as floats but holds ints\n");
}

TEST_CASE("Operators claiming an ONNX op type are tried by priority, then by name") {
  auto names = [](absl::string_view op_type) {
    std::vector<std::string> out;
    for (const OpDef* op : OpRegistry::Global().ForOnnxType(op_type)) out.emplace_back(op->name());
    return out;
  };
  CHECK(names(op_names::kMul) == std::vector<std::string>{op_names::kScalarMul, op_names::kMul});
  CHECK(names("Conv") == std::vector<std::string>{op_names::kConv2D});
  CHECK(names("NoSuchOnnxOp").empty());
  for (const OpDef* op : OpRegistry::Global().All())
    for (const std::string& type : op->onnx().onnx_op_types()) {
      const std::vector<const OpDef*> claimants = OpRegistry::Global().ForOnnxType(type);
      INFO(type);
      CHECK(std::is_sorted(claimants.begin(), claimants.end(), [](const OpDef* a, const OpDef* b) {
        const int pa = a->onnx().onnx_import_priority(), pb = b->onnx().onnx_import_priority();
        return pa != pb ? pa > pb : a->name() < b->name();
      }));
    }
}

TEST_CASE("Slice counts negative indices from the end, clamps, and steps either way") {
  Tensor<float> x(Shape{2, 5});
  for (int i = 0; i < 10; ++i) x.data[i] = static_cast<float>(i);
  const int64_t kMax = std::numeric_limits<int64_t>::max();
  struct Case {
    std::vector<int64_t> starts, ends, axes, steps;
    Shape shape;
    std::vector<float> values;
  };
  for (const Case& c : {
           Case{{1}, {kMax}, {1}, {1}, {2, 4}, {1, 2, 3, 4, 6, 7, 8, 9}},  // to the end, clamped
           Case{{-1}, {-6}, {1}, {-2}, {2, 3}, {4, 2, 0, 9, 7, 5}},        // backwards from the last
           Case{{1, 3}, {2, 100}, {0, -1}, {1, 1}, {1, 2}, {8, 9}},        // two axes, one negative
           Case{{3}, {1}, {1}, {1}, {2, 0}, {}},                           // empty
           Case{{4}, {0}, {1}, {-kMax}, {2, 1}, {4, 9}},                   // a step past every index
           Case{{4}, {0}, {1}, {std::numeric_limits<int64_t>::min()}, {2, 1}, {4, 9}},
           Case{{0}, {5}, {1}, {kMax}, {2, 1}, {0, 5}},
       }) {
    auto t = [](std::vector<int64_t> v) { return TensorData::Int64({static_cast<int64_t>(v.size())}, std::move(v)); };
    const TensorDataPtr starts = t(c.starts), ends = t(c.ends), axes = t(c.axes), steps = t(c.steps);
    std::vector<InputInfo> in = {{true, DataType::kFloat32, x.shape}};
    for (const TensorDataPtr& d : {starts, ends, axes, steps})
      in.push_back({true, DataType::kInt64, d->shape(), true, d.get()});
    auto types = Op(op_names::kSlice)->InferTypes({}, in);
    REQUIRE(types.ok());
    REQUIRE((*types)[0].shape == c.shape);
    Tensor<float> y(c.shape);
    KernelArgs<float> args{
        {&x, nullptr, nullptr, nullptr, nullptr}, {nullptr, starts.get(), ends.get(), axes.get(), steps.get()}, {&y}};
    REQUIRE(Op(op_names::kSlice)->RunFloat({}, args).ok());
    CHECK(y.data == c.values);
  }
  // A zero step is refused.
  const TensorDataPtr zero = TensorData::Int64({1}, {0}), one = TensorData::Int64({1}, {1});
  std::vector<InputInfo> in = {{true, DataType::kFloat32, x.shape}};
  for (const TensorDataPtr& d : {one, one, one, zero})
    in.push_back({true, DataType::kInt64, d->shape(), true, d.get()});
  CHECK_FALSE(Op(op_names::kSlice)->InferTypes({}, in).ok());
}

TEST_CASE("The operator names code outside ops/ uses are exactly the operators registered") {
  std::set<std::string> registered;
  for (const OpDef* op : OpRegistry::Global().All()) registered.insert(std::string(op->name()));
  const std::set<std::string> named(std::begin(op_names::kAll), std::end(op_names::kAll));
  CHECK(named.size() == std::size(op_names::kAll));  // no name twice
  CHECK(named == registered);
}
