#include "mm/engine/types.hpp"

namespace mm {

std::string_view to_string(fill_threshold t) {
  switch (t) {
    case fill_threshold::always:
      return "always";
    case fill_threshold::low_population:
      return "low_population";
    case fill_threshold::high_population:
      return "high_population";
    case fill_threshold::never:
      return "never";
  }
  return "?";
}

std::optional<fill_threshold> parse_fill_threshold(std::string_view s) {
  for (auto t : {fill_threshold::always, fill_threshold::low_population,
                 fill_threshold::high_population, fill_threshold::never})
    if (to_string(t) == s) return t;
  return std::nullopt;
}

std::string_view to_string(match_type t) {
  switch (t) {
    case match_type::success:
      return "Success";
    case match_type::none_found:
      return "NoneFound";
    case match_type::fake_opponent:
      return "FakeOpponent";
    case match_type::invalid_request:
      return "InvalidRequest";
  }
  return "?";
}

std::string_view to_string(update_outcome o) {
  switch (o) {
    case update_outcome::inserted:
      return "inserted";
    case update_outcome::updated:
      return "updated";
    case update_outcome::bucket_changed:
      return "bucket_changed";
    case update_outcome::removed:
      return "removed";
    case update_outcome::no_op:
      return "no_op";
    case update_outcome::rejected:
      return "rejected";
  }
  return "?";
}

}  // namespace mm
