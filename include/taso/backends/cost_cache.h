// The on-disk cache of measured costs: a SQLite file with one row per device and cost key,
// so that a second run on the same machine measures nothing new.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

struct sqlite3;

namespace taso {

class CostCache {
 public:
  // Opens or creates the cache file (and its directory).
  static absl::StatusOr<std::unique_ptr<CostCache>> Open(const std::string& path);
  ~CostCache();
  CostCache(const CostCache&) = delete;
  CostCache& operator=(const CostCache&) = delete;

  // The value stored under `device` and `key`, if any.
  std::optional<double> Lookup(const std::string& device, const std::string& key);
  // Stores `value` under `device` and `key`, replacing what was there.
  absl::Status Store(const std::string& device, const std::string& key, double value);

 private:
  CostCache() = default;
  sqlite3* db_ = nullptr;
};

// The cache file used when none is named: $XDG_CACHE_HOME/taso/costs.sqlite, else
// ~/.cache/taso/costs.sqlite.
std::string DefaultCostCachePath();

}  // namespace taso
