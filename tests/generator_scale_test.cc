// The rule finder's per-form memory at the scale of K=4 over every operator (issue 46).
// Hidden: run it by name, `taso_tests "[scale]"`.
#include <catch2/catch.hpp>

#include <string>

#include "form_store.h"
#include "generator.h"
#include "spill.h"

using namespace taso;

// Not run by default (20 s and 1 GB): the forms' memory at the size of K=4
// over every operator (11,617,164 distinct forms), records past 256 MiB on disk.
TEST_CASE("Eleven million forms in the index and on disk", "[.][scale]") {
  const auto rss_mb = [] { return gen::RssMb(); };
  const uint64_t before = rss_mb();
  gen::SpillFolder folder("");
  gen::FormStore forms(&folder, 256ull << 20);
  gen::PackedCandidate p;
  constexpr size_t kForms = 11617164;
  for (size_t i = 0; i < kForms; ++i) {
    p.a.ops[0].variant = static_cast<uint8_t>(i);
    REQUIRE(forms.Insert(gen::KeyOf(std::to_string(i)), p).ok());
  }
  const uint64_t after = rss_mb();
  WARN("forms " << forms.size() << ": RSS " << before << " -> " << after << " MiB, peak " << gen::PeakRssMb()
                << " MiB, on disk " << (forms.disk_bytes() >> 20) << " MiB");
  CHECK(forms.size() == kForms);
  CHECK(forms.Find(gen::KeyOf("1234567")) == 1234567);
}
