#include "taso/backends/cost_cache.h"

#include <sqlite3.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"

namespace taso {

absl::StatusOr<std::unique_ptr<CostCache>> CostCache::Open(const std::string& path) {
  std::error_code ec;
  const auto dir = std::filesystem::path(path).parent_path();
  if (!dir.empty()) std::filesystem::create_directories(dir, ec);
  auto cache = std::unique_ptr<CostCache>(new CostCache());
  if (sqlite3_open(path.c_str(), &cache->db_) != SQLITE_OK)
    return absl::UnavailableError(absl::StrCat("cannot open the cost cache ", path, ": ", sqlite3_errmsg(cache->db_)));
  // Processes share the file (taso-opt storing costs while taso-run stores a cuDNN
  // algorithm): a write waits for another's lock rather than failing at once.
  sqlite3_busy_timeout(cache->db_, 5000);
  char* error = nullptr;
  if (sqlite3_exec(cache->db_,
                   "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
                   "CREATE TABLE IF NOT EXISTS costs (device TEXT, key TEXT, seconds REAL, PRIMARY KEY (device, key));",
                   nullptr, nullptr, &error) != SQLITE_OK) {
    std::string message = error ? error : "unknown error";
    sqlite3_free(error);
    return absl::UnavailableError(absl::StrCat("cost cache ", path, " is not usable: ", message));
  }
  return cache;
}

CostCache::~CostCache() { sqlite3_close(db_); }

std::optional<double> CostCache::Lookup(const std::string& device, const std::string& key) {
  sqlite3_stmt* s = nullptr;
  std::optional<double> out;
  if (sqlite3_prepare_v2(db_, "SELECT seconds FROM costs WHERE device = ?1 AND key = ?2", -1, &s, nullptr) ==
      SQLITE_OK) {
    sqlite3_bind_text(s, 1, device.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(s, 2, key.c_str(), -1, SQLITE_TRANSIENT);
    if (sqlite3_step(s) == SQLITE_ROW) out = sqlite3_column_double(s, 0);
  }
  sqlite3_finalize(s);
  return out;
}

absl::Status CostCache::Store(const std::string& device, const std::string& key, double value) {
  sqlite3_stmt* s = nullptr;
  int rc = sqlite3_prepare_v2(db_, "INSERT OR REPLACE INTO costs VALUES (?1, ?2, ?3)", -1, &s, nullptr);
  if (rc == SQLITE_OK) {
    sqlite3_bind_text(s, 1, device.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(s, 2, key.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_double(s, 3, value);
    rc = sqlite3_step(s);
  }
  sqlite3_finalize(s);
  if (rc != SQLITE_DONE) return absl::UnavailableError(absl::StrCat("cost cache write failed: ", sqlite3_errmsg(db_)));
  return absl::OkStatus();
}

std::string DefaultCostCachePath() {
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return absl::StrCat(x, "/taso/costs.sqlite");
  const char* home = std::getenv("HOME");
  return absl::StrCat(home && *home ? home : ".", "/.cache/taso/costs.sqlite");
}

}  // namespace taso
