#include "mm/actors/session_service_backfills.hpp"

#include <algorithm>
#include <memory>

#include "mm/actors/errors.hpp"
#include "mm/actors/session_service_explain.hpp"
#include "mm/engine/log.hpp"

namespace mm::actors {

namespace {

using owner = backfill_owners::owner;

caf::error no_match(const std::string& match_id) {
  return make_error(errc::not_found, "match_id: no running match '" + match_id.substr(0, 128) +
                                         "' of this credential");
}

caf::error as_caf(const mm::error& e) {
  return make_error(e.code(), e.what());
}

const owner* owned(session_service_pointer self, const std::string& match_id,
                   const std::string& credential) {
  return self->state.backfills.owned(match_id, credential);
}

bool take_token(session_service_pointer self, const std::string& credential) {
  return self->state.backfills.take(credential, self->clock().now());
}

caf::error too_fast(session_service_pointer self) {
  return as_caf(self->state.backfills.too_fast());
}

void forget_owner(session_service_pointer self, const std::string& match_id) {
  self->state.backfills.forget(match_id);
}

// With partitions the id is claimed across them in the store, by the
// journal (its thread blocks on the store; this one does not).
bool claims_match_ids(session_service_pointer self) {
  const auto& c = self->state.config;
  return c.shared_claims && !c.event_stream.empty() && c.store && self->state.journal;
}

caf::error held_elsewhere(const std::string& id) {
  return make_error(errc::conflict,
                    "match_id: a running match '" + id.substr(0, 128) +
                        "' is registered in another queue of the session queues' partitions; "
                        "stop it there, or register this one under another id");
}

// The claim of a registration this partition refused (a bad field, a bound
// reached, a clash): released. After any other failure (the store's, a
// queue that crashed) the match's row may have been written all the same,
// so the claim stays: a retry here takes it again, and this partition's
// next start drops it if no row holds it.
void release_match_id(session_service_pointer self, const std::string& id, const caf::error& why) {
  if (!claims_match_ids(self)) return;
  const auto code = error_code_of(why);
  if (!code || (*code != errc::invalid_argument && *code != errc::limit_reached &&
                *code != errc::conflict && *code != errc::not_found && *code != errc::forbidden))
    return;
  self->send(self->state.journal, journal_atom::value, release_atom::value, backfill_atom::value,
             id);
}

// The registration, to the queue that takes it (its owner is recorded).
void register_in(session_service_pointer self, std::uint32_t slot, backfill_registration r,
                 caf::typed_response_promise<backfill_state> rp) {
  const std::string id = r.match_id;
  self->request(self->state.slots[slot], caf::infinite, backfill_atom::value, create_atom::value,
                std::move(r))
      .then(
          [self, rp, id](backfill_state& b) mutable {
            self->state.backfills.written(id);
            rp.deliver(std::move(b));
          },
          [self, rp, id](caf::error& e) mutable {
            forget_owner(self, id);
            release_match_id(self, id, e);
            rp.deliver(std::move(e));
          });
}

}  // namespace

caf::result<backfill_state> route_backfill_create(session_service_pointer self,
                                                  backfill_registration& r) {
  auto& st = self->state;
  if (st.saving) return make_error(errc::instance_down, "the server is stopping");
  if (!take_token(self, r.credential)) return too_fast(self);
  if (auto why = st.backfills.refusal(r.match_id, r.credential)) return as_caf(*why);
  bool made = false;
  const auto slot = st.registry->find_or_make(r.queue, made);
  if (!slot)
    return make_error(errc::not_found, "queue: no queue '" + r.queue.substr(0, 64) +
                                           "' (a queue split by an attribute: name its shard)");
  if (made) start_slot(self, *slot, {}, {});
  r.queue = st.registry->config(*slot).name;
  // The owner is recorded before the claim's answer, so a second
  // registration of the id meanwhile is refused here (refusal above).
  const auto at = static_cast<std::uint32_t>(*slot);
  st.backfills.add(r.match_id, at, r.credential, true);
  auto rp = self->make_response_promise<backfill_state>();
  if (!claims_match_ids(self)) {
    register_in(self, at, std::move(r), rp);
    return rp;
  }
  const std::string id = r.match_id;
  self->request(st.journal, caf::infinite, journal_atom::value, claim_atom::value,
                backfill_atom::value, id)
      .then(
          [self, rp, at, r = std::move(r)](bool ours) mutable {
            if (ours) return register_in(self, at, std::move(r), rp);
            forget_owner(self, r.match_id);
            rp.deliver(held_elsewhere(r.match_id));
          },
          [self, rp, id](caf::error& e) mutable {
            forget_owner(self, id);
            rp.deliver(std::move(e));
          });
  return rp;
}

caf::result<backfill_state> route_backfill_update(session_service_pointer self,
                                                  backfill_registration& r) {
  auto& st = self->state;
  if (!take_token(self, r.credential)) return too_fast(self);
  const owner* o = owned(self, r.match_id, r.credential);
  if (!o) return no_match(r.match_id);
  r.queue = st.registry->config(o->slot).name;
  return self->delegate(st.slots[o->slot], backfill_atom::value, update_atom::value, std::move(r));
}

caf::result<bool> route_backfill_stop(session_service_pointer self, const std::string& match_id,
                                      const std::string& credential) {
  auto& st = self->state;
  if (!take_token(self, credential)) return too_fast(self);
  const owner* o = owned(self, match_id, credential);
  if (!o) return no_match(match_id);
  auto rp = self->make_response_promise<bool>();
  self->request(st.slots[o->slot], caf::infinite, backfill_atom::value, close_atom::value, match_id)
      .then(
          [self, rp, match_id](bool stopped) mutable {
            forget_owner(self, match_id);
            rp.deliver(stopped);
          },
          [rp](caf::error& e) mutable { rp.deliver(std::move(e)); });
  return rp;
}

caf::result<backfill_state> route_backfill_seats(session_service_pointer self, seat_change& c,
                                                 bool joined) {
  auto& st = self->state;
  if (!take_token(self, c.credential)) return too_fast(self);
  const owner* o = owned(self, c.match_id, c.credential);
  if (!o) return no_match(c.match_id);
  const auto slot = st.slots[o->slot];
  if (joined) return self->delegate(slot, backfill_atom::value, confirm_atom::value, std::move(c));
  return self->delegate(slot, backfill_atom::value, release_atom::value, std::move(c));
}

caf::result<backfill_state> route_backfill_status(session_service_pointer self,
                                                  const std::string& match_id,
                                                  const std::string& credential) {
  const owner* o = owned(self, match_id, credential);
  if (!o) return no_match(match_id);
  return self->delegate(self->state.slots[o->slot], backfill_atom::value, status_atom::value,
                        match_id);
}

caf::result<session::explanation> route_backfill_explain(session_service_pointer self,
                                                         const std::string& match_id,
                                                         std::uint32_t limit,
                                                         const std::string& credential) {
  if (!take_explain(self)) return explaining_too_fast(self);
  const owner* o = owned(self, match_id, credential);
  if (!o) return no_match(match_id);
  auto rp = self->make_response_promise<session::explanation>();
  self->request(self->state.slots[o->slot], caf::infinite, backfill_atom::value,
                explain_atom::value, match_id, limit)
      .then(
          [self, rp, credential](session::explanation& e) mutable {
            hide_candidates(self, e, credential);
            rp.deliver(std::move(e));
          },
          [rp](caf::error& e) mutable { rp.deliver(std::move(e)); });
  return rp;
}

caf::result<std::vector<backfill_state>> route_backfill_list(session_service_pointer self,
                                                             const std::string& queue,
                                                             const std::string& credential) {
  auto& st = self->state;
  std::vector<std::size_t> slots;
  if (queue.empty()) {
    for (std::size_t i = 0; i < st.slots.size(); ++i) slots.push_back(i);
  } else if (const auto at = st.registry->find(queue)) {
    slots.push_back(*at);
  } else {
    return make_error(errc::not_found, "queue: no queue '" + queue.substr(0, 64) + "'");
  }
  auto rp = self->make_response_promise<std::vector<backfill_state>>();
  if (slots.empty()) {
    rp.deliver(std::vector<backfill_state>{});
    return rp;
  }
  auto all = std::make_shared<std::vector<backfill_state>>();
  auto left = std::make_shared<std::size_t>(slots.size());
  auto done = [rp, all, left, credential]() mutable {
    if (--*left > 0) return;
    if (!credential.empty())
      all->erase(std::remove_if(all->begin(), all->end(),
                                [&](const backfill_state& b) {
                                  return b.registration.credential != credential;
                                }),
                 all->end());
    rp.deliver(std::move(*all));
  };
  for (const std::size_t i : slots)
    self->request(st.slots[i], caf::infinite, backfill_atom::value, inspect_atom::value)
        .then(
            [all, done](std::vector<backfill_state>& some) mutable {
              all->insert(all->end(), std::make_move_iterator(some.begin()),
                          std::make_move_iterator(some.end()));
              done();
            },
            [done](caf::error&) mutable { done(); });  // a queue restarting: left out
  return rp;
}

std::vector<std::vector<backfill_state>> take_back_backfills(session_service_pointer self) {
  auto& st = self->state;
  std::vector<std::vector<backfill_state>> per_slot(st.registry->size());
  for (auto& b : st.config.restored.backfills) {
    auto& r = b.registration;
    bool made = false;
    const auto slot = st.registry->find_or_make(r.queue, made);
    if (!slot || st.backfills.contains(r.match_id)) {
      log(log_level::warning, "sessions",
          "running match '" + r.match_id + "' of the last run stops: its queue '" + r.queue +
              "' is gone, or its id is held twice");
      self->request(st.journal, caf::infinite, journal_atom::value, backfill_atom::value,
                    std::move(b), true)
          .then([](bool) {}, [](caf::error&) {});
      continue;
    }
    if (per_slot.size() <= *slot) per_slot.resize(*slot + 1);
    st.backfills.add(r.match_id, static_cast<std::uint32_t>(*slot), r.credential, false);
    per_slot[*slot].push_back(std::move(b));
  }
  st.config.restored.backfills.clear();
  return per_slot;
}

}  // namespace mm::actors
