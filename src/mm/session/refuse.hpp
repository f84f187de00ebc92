// The session engine's way to refuse a caller's input: mm::error
// (invalid_argument) whose message starts with the offending field.
#pragma once

#include <string>

#include "mm/engine/error.hpp"

namespace mm::session {

[[noreturn]] inline void refuse(const std::string& field, const std::string& why) {
  throw error(errc::invalid_argument, field + ": " + why);
}

}  // namespace mm::session
