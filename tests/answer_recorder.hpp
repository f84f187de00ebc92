// Answers of the real server written down for the contract's check
// (tests/api/check_recorded.mjs validates each against docs/openapi.json):
// when MM_CONTRACT_RECORD names a file (or the build named one for the test
// binary, MM_CONTRACT_RECORD_FILE), every answer a test records is appended
// to it as one JSON line {method, path, status, content_type, body}.
// The cluster tests record theirs, so the statuses and bodies a takeover
// answers are held to the contract too. One write per line, with O_APPEND:
// tests running at once in several processes do not mix their lines.
#pragma once

#include <fcntl.h>
#include <httplib.h>
#include <unistd.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

namespace mm::test {

inline void record_answer(const std::string& method, const std::string& path,
                          const httplib::Result& r) {
  const char* file = std::getenv("MM_CONTRACT_RECORD");
#ifdef MM_CONTRACT_RECORD_FILE
  if (file == nullptr) file = MM_CONTRACT_RECORD_FILE;
#endif
  if (file == nullptr || *file == '\0' || !r) return;
  const std::string line = nlohmann::json{{"method", method},
                                          {"path", path},
                                          {"status", r->status},
                                          {"content_type", r->get_header_value("Content-Type")},
                                          {"body", r->body}}
                               .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
                           "\n";
  const int fd = ::open(file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return;
  [[maybe_unused]] const auto written = ::write(fd, line.data(), line.size());
  ::close(fd);
}

}  // namespace mm::test
