// The interface of a bucketing strategy (docs/design.md, Strategies). The engine calls it when a
// player is placed and once per query, never per candidate, so a virtual call is
// cheap here and lets strategies be chosen at run time from configuration.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "mm/strategies/label.hpp"

namespace mm {

template <class Profile>
class strategy {
 public:
  using model_type = typename Profile::model_type;
  using query_type = typename Profile::query_type;

  virtual ~strategy() = default;

  // Stable identifier: persisted state is restored to the strategy of this name.
  virtual std::string name() const = 0;
  virtual label_kind kind() const = 0;
  // Hard: only equal labels may match, other buckets are never walked.
  virtual bool hard() const = 0;

  // Labels must be a pure function of the model (or query) and the strategy's
  // state, so the same player always lands in the same bucket.
  virtual label_value label_of(const model_type& m) const = 0;
  virtual label_value label_of(const query_type& q) const = 0;

  // Human-readable label for introspection.
  virtual std::string describe(label_value v) const {
    return kind() == label_kind::ranged ? std::to_string(static_cast<std::int64_t>(v))
                                        : std::to_string(v);
  }

  // Persisted state (opaque bytes; cereal is the codec of the built-in ones).
  // load_state throws std::runtime_error on bytes it cannot read.
  virtual std::string save_state() const { return {}; }
  virtual void load_state(const std::string& /*bytes*/) {}

  // Called at each rebalance with this strategy's labels of the sizing samples,
  // oldest first. A strategy may learn from them; it must not change how it labels
  // players, since the labels already stored in the samples would go stale.
  virtual void rebalance(std::span<const label_value> /*sample_labels*/) {}
};

// Distance between two labels of one strategy in the query's bucket order
// (design.md, Queries); nullopt when a hard strategy forbids the pair.
inline std::optional<std::uint64_t> label_distance(label_kind kind, bool hard, label_value a,
                                                   label_value b) {
  if (a == b) return 0;
  if (hard) return std::nullopt;
  if (kind == label_kind::distinct) return 2;
  const auto sa = static_cast<std::int64_t>(a), sb = static_cast<std::int64_t>(b);
  return static_cast<std::uint64_t>(sa > sb ? sa - sb : sb - sa);
}

}  // namespace mm
