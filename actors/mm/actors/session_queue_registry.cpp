#include "mm/actors/session_queue_registry.hpp"

#include <algorithm>

#include "mm/actors/errors.hpp"

namespace mm::actors {

namespace {

// The shard of a sharded queue a ticket goes to: its players' value of the
// attribute, which must be the same for all and fit a queue name.
caf::expected<std::string> shard_of(const session_ticket& t, const session::queue_config& base) {
  std::string value;
  for (std::size_t i = 0; i < t.players.size(); ++i) {
    const std::string field = "players[" + std::to_string(i) + "].strings." + base.shard_by;
    const auto& strings = t.players[i].strings;
    const auto it = std::find_if(strings.begin(), strings.end(),
                                 [&](const named_text& x) { return x.name == base.shard_by; });
    if (it == strings.end())
      return make_error(errc::invalid_argument, field + ": queue '" + base.name +
                                                    "' is split by it: every player needs it");
    if (!session::valid_queue_name(it->value))
      return make_error(errc::invalid_argument, field + ": 1 to 64 of a-z, 0-9, _ and -");
    if (i > 0 && it->value != value)
      return make_error(errc::invalid_argument, field + ": differs from players[0]'s");
    value = it->value;
  }
  return base.name + "." + value;
}

}  // namespace

session_queue_registry::session_queue_registry(const std::vector<session::queue_config>& queues,
                                               std::optional<session::queue_config> default_queue,
                                               std::size_t max_queues,
                                               session::partition_slice partition)
    : default_queue_(std::move(default_queue)), max_queues_(max_queues), partition_(partition) {
  for (const auto& q : queues) {
    if (!partition_.holds(q.name)) {
      elsewhere_[q.name] = true;
      continue;
    }
    if (q.shard_by.empty()) {
      configured_[q.name] = q;
      add(q);
    } else {
      sharded_[q.name] = q;
    }
  }
}

std::size_t session_queue_registry::add(session::queue_config c) {
  by_name_[c.name] = slots_.size();
  slots_.push_back(std::move(c));
  closed_.push_back(false);
  return slots_.size() - 1;
}

std::optional<session::queue_config> session_queue_registry::config_of(
    const std::string& name) const {
  if (const auto it = configured_.find(name); it != configured_.end()) return it->second;
  return config_for_new(name);
}

std::vector<std::size_t> session_queue_registry::reconfigure(
    const std::vector<session::queue_config>& queues,
    std::optional<session::queue_config> default_queue) {
  configured_.clear();
  sharded_.clear();
  elsewhere_.clear();
  for (const auto& q : queues) {
    if (partition_.holds(q.name))
      (q.shard_by.empty() ? configured_ : sharded_)[q.name] = q;
    else
      elsewhere_[q.name] = true;
  }
  default_queue_ = std::move(default_queue);
  std::vector<std::size_t> changed;
  for (std::size_t slot = 0; slot < slots_.size(); ++slot) {
    auto next = config_of(slots_[slot].name);
    closed_[slot] = !next;
    if (!next || *next == slots_[slot]) continue;
    slots_[slot] = std::move(*next);
    changed.push_back(slot);
  }
  return changed;
}

std::optional<session::queue_config> session_queue_registry::config_for_new(
    const std::string& name) const {
  if (const auto dot = name.find('.'); dot != std::string::npos) {
    const auto base = sharded_.find(name.substr(0, dot));
    if (base == sharded_.end() || !session::valid_queue_name(name.substr(dot + 1)))
      return std::nullopt;
    session::queue_config c = base->second;
    c.name = name;
    c.shard_by.clear();
    return c;
  }
  if (!default_queue_ || !session::valid_queue_name(name)) return std::nullopt;
  session::queue_config c = *default_queue_;
  c.name = name;
  c.shard_by.clear();  // a queue made on first use is one queue
  return c;
}

std::optional<std::size_t> session_queue_registry::find(const std::string& full_name) const {
  const auto it = by_name_.find(full_name);
  if (it == by_name_.end()) return std::nullopt;
  return it->second;
}

std::optional<std::size_t> session_queue_registry::find_or_make(const std::string& full_name,
                                                                bool& made) {
  made = false;
  if (auto at = find(full_name)) return at;
  if (slots_.size() >= max_queues_) return std::nullopt;
  auto c = config_for_new(full_name);
  if (!c) return std::nullopt;
  made = true;
  return add(std::move(*c));
}

std::optional<caf::error> session_queue_registry::check_elsewhere(const std::string& name,
                                                                  const std::string& field) const {
  const std::string quoted = "'" + name.substr(0, 64) + "'";
  if (name.find('.') != std::string::npos)
    return make_error(errc::invalid_argument,
                      field + ": " + quoted + " names a shard; send the ticket to its queue");
  if (elsewhere_.count(name) != 0) return std::nullopt;
  if (default_queue_ && session::valid_queue_name(name)) return std::nullopt;
  return make_error(errc::invalid_argument, field + ": no queue " + quoted);
}

caf::expected<std::size_t> session_queue_registry::place(const std::string& name,
                                                         const session_ticket& t,
                                                         const std::string& field, bool& made) {
  made = false;
  const std::string quoted = "'" + name.substr(0, 64) + "'";
  if (name.find('.') != std::string::npos)
    return make_error(errc::invalid_argument,
                      field + ": " + quoted + " names a shard; send the ticket to its queue");
  // A ticket goes to its first queue's partition, and a multi-queue ticket's
  // queues of other partitions are checked there (check_elsewhere): none
  // gets here with another partition's queue.
  if (!partition_.holds(name))
    return make_error(errc::invalid_argument,
                      field + ": queue " + quoted + " runs in another session partition");
  std::string target = name;
  if (const auto base = sharded_.find(name); base != sharded_.end()) {
    auto shard = shard_of(t, base->second);
    if (!shard) return std::move(shard.error());
    target = std::move(*shard);
  }
  if (auto at = find(target)) {
    if (closed_[*at])
      return make_error(
          errc::invalid_argument,
          field + ": queue '" + target + "' is closed: the configuration no longer has it");
    return *at;
  }
  if (target == name && !default_queue_)
    return make_error(errc::invalid_argument, field + ": no queue " + quoted);
  if (target == name && !session::valid_queue_name(name))
    return make_error(errc::invalid_argument,
                      field + ": a new queue's name is 1 to 64 of a-z, 0-9, _ and -");
  if (slots_.size() >= max_queues_)
    return make_error(errc::invalid_argument, field + ": no queue '" + target +
                                                  "', and the server runs its maximum of " +
                                                  std::to_string(max_queues_) + " queues");
  auto at = find_or_make(target, made);
  if (!at) return make_error(errc::invalid_argument, field + ": no queue " + quoted);
  return *at;
}

}  // namespace mm::actors
