#include "mm/engine/error.hpp"

namespace mm {

std::string_view to_string(errc e) {
  switch (e) {
    case errc::invalid_config:
      return "invalid_config";
    case errc::invalid_argument:
      return "invalid_argument";
    case errc::database:
      return "database";
    case errc::snapshot:
      return "snapshot";
    case errc::no_instances:
      return "no_instances";
    case errc::instance_down:
      return "instance_down";
    case errc::not_owned_here:
      return "not_owned_here";
    case errc::no_available_lobby:
      return "no_available_lobby";
    case errc::not_found:
      return "not_found";
    case errc::conflict:
      return "conflict";
    case errc::system_failure:
      return "system_failure";
    case errc::limit_reached:
      return "limit_reached";
    case errc::fenced:
      return "fenced";
    case errc::forbidden:
      return "forbidden";
  }
  return "unknown";
}

}  // namespace mm
