#include "mm/session/rules.hpp"

#include <algorithm>
#include <cmath>

namespace mm::session {

namespace {
constexpr rule_kind all_kinds[] = {rule_kind::difference, rule_kind::equality,
                                   rule_kind::intersection, rule_kind::latency,
                                   rule_kind::team_balance};

bool finite_at_least(double v, double low) {
  return std::isfinite(v) && v >= low;
}
}  // namespace

const char* to_string(rule_kind k) {
  switch (k) {
    case rule_kind::difference:
      return "difference";
    case rule_kind::equality:
      return "equality";
    case rule_kind::intersection:
      return "intersection";
    case rule_kind::latency:
      return "latency";
    case rule_kind::team_balance:
      return "team_balance";
  }
  return "unknown";
}

std::optional<rule_kind> rule_kind_named(const std::string& name) {
  for (auto k : all_kinds)
    if (name == to_string(k)) return k;
  return std::nullopt;
}

double threshold_after(const rule& r, std::chrono::milliseconds waited) {
  const double limit = std::max(r.expand.limit, r.max_difference);
  if (r.expand.every.count() <= 0 || r.expand.step <= 0 || waited.count() <= 0)
    return r.max_difference;
  const double steps =
      std::floor(static_cast<double>(waited.count()) / static_cast<double>(r.expand.every.count()));
  return std::min(limit, r.max_difference + steps * r.expand.step);
}

bool filters_after(const rule& r, std::chrono::milliseconds waited) {
  return !r.optional_after || waited < *r.optional_after;
}

std::vector<std::string> check(const rule& r, const std::string& prefix) {
  std::vector<std::string> e;
  if (!finite_at_least(r.weight, 0)) e.push_back(prefix + "weight must be a number >= 0");
  if (r.optional_after && r.optional_after->count() < 0)
    e.push_back(prefix + "seconds_until_optional must not be negative");
  const bool thresholded = r.kind == rule_kind::difference || r.kind == rule_kind::team_balance;
  if (thresholded) {
    if (!finite_at_least(r.max_difference, 0) || r.max_difference == 0)
      e.push_back(prefix + "max_difference must be a number greater than 0");
    if (!finite_at_least(r.expand.step, 0))
      e.push_back(prefix + "expansion.step must be a number >= 0");
    if (r.expand.every.count() < 0) e.push_back(prefix + "expansion.every must not be negative");
    if (r.expand.step > 0 && r.expand.every.count() == 0)
      e.push_back(prefix + "expansion.every must be given with expansion.step");
    if (!finite_at_least(r.expand.limit, 0) ||
        (r.expand.step > 0 && r.expand.limit < r.max_difference))
      e.push_back(prefix + "expansion.limit must be a number at least max_difference");
  }
  if (r.kind == rule_kind::intersection && r.min_overlap == 0)
    e.push_back(prefix + "min_overlap must be at least 1");
  if (r.kind == rule_kind::difference && r.attribute.empty())
    e.push_back(prefix + "attribute must name a number attribute or \"mmr\"");
  if ((r.kind == rule_kind::equality || r.kind == rule_kind::intersection) && r.attribute.empty())
    e.push_back(prefix + "attribute must name an attribute of the players");
  return e;
}

}  // namespace mm::session
