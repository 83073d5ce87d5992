// The kernel backends this build has: cpu (oneDNN) always, cuda where the toolkit was found.
#include <catch2/catch.hpp>

#include "taso/backends.h"

TEST_CASE("Backends report what is built and what can run") {
  auto backends = taso::AvailableBackends();
  REQUIRE(backends.size() == 3);
  CHECK(backends[0].name == "cpu");
  CHECK(backends[0].usable);
  CHECK_THAT(backends[0].detail, Catch::StartsWith("oneDNN 2."));
  CHECK(backends[1].name == "cuda");
#ifdef TASO_WITH_CUDA
  CHECK(backends[1].compiled);
  CHECK_THAT(backends[1].detail, Catch::Contains("cuDNN") && Catch::Contains("cuBLAS"));
#else
  CHECK_FALSE(backends[1].compiled);
  CHECK_FALSE(backends[1].usable);
#endif
  CHECK(backends[2].name == "analytic");
}
