#include "mm/actors/session_switch.hpp"

#include <caf/all.hpp>
#include <caf/mailbox_element.hpp>
#include <caf/make_actor.hpp>
#include <caf/monitorable_actor.hpp>

#include "mm/actors/errors.hpp"
#include "mm/actors/interface.hpp"
#include "mm/actors/session_fan_out.hpp"
#include "mm/session/partitions.hpp"

namespace mm::actors {

session_partitions::session_partitions(std::uint32_t count, session::id_permutation ids)
    : ids_(ids) {
  if (count == 0 || count > session::max_id_partitions)
    throw mm::error(errc::invalid_config,
                    "sessions.partitions: 1 to " + std::to_string(session::max_id_partitions));
  for (std::uint32_t p = 0; p < count; ++p) targets_.push_back(std::make_shared<session_target>());
}

std::uint32_t session_partitions::of_queue(std::string_view queue) const {
  return session::queue_partition(session::partitioned_name(queue), count());
}

std::uint32_t session_partitions::of_id(std::uint64_t public_id) const {
  if (count() == 1) return 0;
  // An id no partition made (a guess) goes to whichever its bits name, or
  // to 0: that partition does not know it either, and says so.
  const auto p = session::partition_of_serial(ids_.decode(public_id));
  return p < count() ? p : 0;
}

namespace {

// Where a message goes: one partition, or every running one, merged.
struct route {
  std::uint32_t partition = 0;
  std::optional<fan_out_merge> merge;
};
route one(std::uint32_t partition) {
  return {partition, std::nullopt};
}
route every(fan_out_merge merge) {
  return {0, merge};
}

bool is(const caf::type_erased_tuple& m, std::size_t pos, caf::atom_value a) {
  return m.size() > pos && m.match_element<caf::atom_value>(pos) &&
         m.get_as<caf::atom_value>(pos) == a;
}

template <class T>
const T* element(const caf::type_erased_tuple& m, std::size_t pos) {
  return m.size() > pos && m.match_element<T>(pos) ? &m.get_as<T>(pos) : nullptr;
}

route backfill_route(const caf::type_erased_tuple& m, const session_partitions& parts) {
  // A registration names its queue; an update only its match (its id).
  if (is(m, 1, create_atom::value))
    if (const auto* r = element<backfill_registration>(m, 2)) return one(parts.of_queue(r->queue));
  if (is(m, 1, confirm_atom::value) || is(m, 1, release_atom::value))
    if (const auto* c = element<seat_change>(m, 2); c && c->reservation != 0)
      return one(parts.of_id(c->reservation));
  if (is(m, 1, inspect_atom::value))
    if (const auto* queue = element<std::string>(m, 2); queue && !queue->empty())
      return one(parts.of_queue(*queue));
  if (is(m, 1, inspect_atom::value)) return every(fan_out_merge::every_match);
  // A running match named by its id alone (update, close, status, explain).
  return every(fan_out_merge::the_one_that_has_it);
}

route route_of(const caf::type_erased_tuple& m, const session_partitions& parts) {
  if (is(m, 0, create_atom::value) || is(m, 0, inspect_atom::value))
    if (const auto* queue = element<std::string>(m, 1)) return one(parts.of_queue(*queue));
  if (is(m, 0, cancel_atom::value) || is(m, 0, status_atom::value) || is(m, 0, explain_atom::value))
    if (const auto* id = element<std::uint64_t>(m, 1)) return one(parts.of_id(*id));
  if (is(m, 0, info_atom::value) && m.size() == 1) return every(fan_out_merge::every_queue);
  if (is(m, 0, backfill_atom::value)) return backfill_route(m, parts);
  return one(0);  // the lobbies, and anything else (the service answers it)
}

class session_switch final : public caf::monitorable_actor {
 public:
  session_switch(caf::actor_config& cfg, std::shared_ptr<const session_partitions> parts,
                 std::set<std::string> sigs)
      : monitorable_actor(cfg.add_flag(is_hidden_flag)),
        parts_(std::move(parts)),
        sigs_(std::move(sigs)) {}

  void enqueue(caf::mailbox_element_ptr what, caf::execution_unit* host) override {
    // One partition: every message to it, unread.
    const route r = parts_->count() == 1 ? one(0) : route_of(what->content(), *parts_);
    if (r.merge) return fan_out_here(*r.merge, std::move(what), host);
    if (auto service = parts_->target(r.partition).get()) {
      service->enqueue(std::move(what), host);
      return;
    }
    // None runs here: a request is answered with the reason, where its
    // answer would have gone; anything else is dropped.
    const std::string by = parts_->target(r.partition).served_by();
    answer(*what, host,
           make_error(errc::not_owned_here,
                      what_is_served(r.partition) + " not served by this node" +
                          (by.empty() ? std::string(" now (being taken over): retry in a moment")
                                      : ": ask " + by)));
  }

  std::set<std::string> message_types() const override { return sigs_; }

  const char* name() const override { return "session_switch"; }

 private:
  std::string what_is_served(std::uint32_t p) const {
    return parts_->count() == 1 ? "the session queues are"
                                : "session partition " + std::to_string(p) + " is";
  }

  static void answer(caf::mailbox_element& what, caf::execution_unit* host, caf::error e) {
    if (!what.mid.is_request()) return;
    const caf::strong_actor_ptr& to = what.stages.empty() ? what.sender : what.stages.back();
    if (to) to->enqueue(nullptr, what.mid.response_id(), caf::make_message(std::move(e)), host);
  }

  void fan_out_here(fan_out_merge merge, caf::mailbox_element_ptr what, caf::execution_unit* host) {
    std::vector<caf::actor> running;
    for (std::uint32_t p = 0; p < parts_->count(); ++p)
      if (auto s = parts_->target(p).get()) running.push_back(caf::actor_cast<caf::actor>(s));
    if (running.empty()) {
      answer(*what, host,
             make_error(errc::not_owned_here,
                        "no session partition is served by this node now: retry in a moment"));
      return;
    }
    if (!what->mid.is_request()) return;
    caf::strong_actor_ptr to = what->stages.empty() ? what->sender : what->stages.back();
    if (!to) return;
    // A running match not found here may be in a partition another node runs.
    const bool elsewhere =
        merge == fan_out_merge::the_one_that_has_it && running.size() < parts_->count();
    fan_out(home_system(), std::move(running), what->move_content_to_message(), merge,
            std::move(to), what->mid, elsewhere);
  }

  std::shared_ptr<const session_partitions> parts_;
  std::set<std::string> sigs_;
};

}  // namespace

caf::strong_actor_ptr make_session_switch(caf::actor_system& sys,
                                          std::shared_ptr<const session_partitions> partitions,
                                          std::set<std::string> sigs) {
  caf::actor_config cfg;
  return caf::make_actor<session_switch, caf::strong_actor_ptr>(
      sys.next_actor_id(), sys.node(), &sys, cfg, std::move(partitions), std::move(sigs));
}

}  // namespace mm::actors
