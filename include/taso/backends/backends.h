// Which kernel backends this build has and whether each can run on this machine.
#pragma once

#include <string>
#include <vector>

namespace taso {

struct BackendInfo {
  std::string name;       // "cpu", "cuda", "analytic"
  bool compiled = false;  // built into this binary
  bool usable = false;    // can run here (e.g. a GPU is present)
  std::string detail;     // library versions, or why it cannot run
};

std::vector<BackendInfo> AvailableBackends();

}  // namespace taso
