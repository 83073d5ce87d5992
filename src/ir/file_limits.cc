#include "taso/ir/file_limits.h"

#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"

namespace taso {

absl::Status CheckFileSize(const std::string& path, int64_t max_bytes, absl::string_view what, absl::string_view flag) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return absl::OkStatus();
  const std::uintmax_t bytes = std::filesystem::file_size(path, ec);
  if (ec || bytes <= static_cast<std::uintmax_t>(max_bytes)) return absl::OkStatus();
  return absl::ResourceExhaustedError(absl::StrCat(what, " '", path, "' is ", bytes, " bytes, over the limit of ",
                                                   max_bytes, " bytes (raise it with ", flag, ")"));
}

absl::Status ValidateFileLimit(int64_t max_bytes, absl::string_view flag) {
  if (max_bytes >= 1 && max_bytes <= kProtobufMaxBytes) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(flag, " must lie between 1 and ", kProtobufMaxBytes, " (protobuf reads no larger file)"));
}

}  // namespace taso
