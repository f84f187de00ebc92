#include "mm/session/explain.hpp"

namespace mm::session {

const char* to_string(refusal r) {
  switch (r) {
    case refusal::none:
      return "none";
    case refusal::rule:
      return "rule";
    case refusal::players:
      return "players";
    case refusal::teams:
      return "teams";
    case refusal::datacenter:
      return "datacenter";
    case refusal::already_in:
      return "already_in";
  }
  return "unknown";
}

const char* to_string(wait_verdict v) {
  switch (v) {
    case wait_verdict::no_candidates:
      return "no_candidates";
    case wait_verdict::too_few_players:
      return "too_few_players";
    case wait_verdict::enough_players:
      return "enough_players";
  }
  return "unknown";
}

}  // namespace mm::session
