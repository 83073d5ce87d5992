// Size limits on the files the tools read whole into memory (a model, a rule database):
// a file over its limit is refused before it is read, with one line naming the limit
// and the flag that raises it, rather than exhausting memory.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace taso {

// protobuf parses no message of 2 GiB or more, so neither limit can usefully exceed it.
inline constexpr int64_t kProtobufMaxBytes = (int64_t{2} << 30) - 1;
inline constexpr int64_t kDefaultMaxModelBytes = kProtobufMaxBytes;
inline constexpr int64_t kDefaultMaxRuleFileBytes = int64_t{256} << 20;

// Fails when the file at `path` is larger than `max_bytes`: "<what> 'path' is N bytes,
// over the limit of M bytes (raise it with <flag>)". A file that cannot be sized passes:
// reading it reports that. `max_bytes` must lie in [1, kProtobufMaxBytes]
// (ValidateFileLimit).
absl::Status CheckFileSize(const std::string& path, int64_t max_bytes, absl::string_view what, absl::string_view flag);
// Fails when a limit given by `flag` is not positive or exceeds kProtobufMaxBytes.
absl::Status ValidateFileLimit(int64_t max_bytes, absl::string_view flag);

}  // namespace taso
