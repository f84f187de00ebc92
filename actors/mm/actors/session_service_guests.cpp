// The tickets a session service takes in besides those created through it
// (session_service.hpp): the waiting tickets of its last run, and, with the
// queues in partitions, the multi-queue tickets of other partitions that
// wait in its queues too (guests), with what becomes of them.
//
// A ticket whose queues fall in several partitions has one journal row, its
// home's (its first queue's partition), and a guest row for each other
// partition (mm/storage/ticket_journal.hpp). Each of those partitions holds
// it in its queues as any multi-queue ticket, and may match it; the store
// writes its first outcome only, and a match that lost it is left out
// whole (journal_contest.hpp): its other tickets wait again (matches_lost).
// Every partition it waits in learns its outcome from the event stream
// (left_elsewhere): the home tells its owner.
#include <algorithm>
#include <set>

#include "mm/actors/session_service.hpp"
#include "mm/actors/session_service_backfills.hpp"
#include "mm/engine/log.hpp"
#include "mm/session/public_id.hpp"

namespace mm::actors {

namespace {

// A create's answer from the store comes within a journal batch: a guest
// blocked by one is asked again this often, this many times at most.
constexpr auto guest_retry_after = std::chrono::milliseconds(20);
constexpr std::uint32_t max_guest_retries = 250;

// The slots of the queues of `t` this partition runs (made when they may
// be; a queue split by an attribute: this ticket's shard).
std::vector<std::uint32_t> local_slots(session_service_pointer self, const durable_ticket& t,
                                       std::vector<std::size_t>* made_slots) {
  auto& st = self->state;
  std::vector<std::uint32_t> out;
  for (const auto& q : t.queues) {
    if (!st.registry->holds(q)) continue;
    bool made = false;
    std::optional<std::size_t> at;
    if (q.find('.') != std::string::npos) {
      at = st.registry->find_or_make(q, made);
    } else if (auto placed = st.registry->place(q, t.ticket, "queue", made)) {
      at = *placed;
    }
    if (!at) continue;
    if (made) made_slots->push_back(*at);
    const auto slot = static_cast<std::uint32_t>(*at);
    if (std::find(out.begin(), out.end(), slot) == out.end()) out.push_back(slot);
  }
  return out;
}

}  // namespace

void take_back(session_service_pointer self) {
  auto& st = self->state;
  std::vector<std::vector<durable_ticket>> per_slot(st.registry->size());
  std::vector<ticket_outcome> failed;
  for (auto& t : st.config.restored.waiting) {
    ticket_book::entry e;
    std::size_t here = 0;  // its queues this partition runs
    for (const auto& q : t.queues) {
      if (!st.registry->holds(q)) continue;  // a guest in another partition
      ++here;
      bool made = false;
      if (auto at = st.registry->find_or_make(q, made)) {
        if (per_slot.size() <= *at) per_slot.resize(*at + 1);
        e.slots.push_back(static_cast<std::uint32_t>(*at));
      }
    }
    if (e.slots.size() != here || here == 0) {
      ticket_outcome o;
      o.queue = t.queues.front();
      o.ticket = t.id;
      o.state = session::ticket_state::failed;
      failed.push_back(std::move(o));
      log(log_level::warning, "sessions",
          "ticket " + session::format_public_id(t.id) +
              " of the last run fails: one of its queues is gone");
      continue;
    }
    t.contested = !st.contest.services_of(t.queues).empty();
    for (const auto& p : t.ticket.players) e.players.push_back(p.id);
    e.credential = st.book->intern(t.ticket.credential);
    e.pending = false;
    st.book->add(t.id, std::move(e));
    for (const std::uint32_t slot : st.book->find(t.id)->slots) per_slot[slot].push_back(t);
  }
  if (!st.config.restored.waiting.empty())
    log(log_level::info, "sessions",
        "" + std::to_string(st.book->waiting_count()) +
            " waiting tickets of the last run wait again");
  st.config.restored.waiting.clear();
  take_in_guests(self, std::move(st.config.restored.guests), &per_slot);
  st.config.restored.guests.clear();
  for (auto& o : st.config.restored.retained) st.book->keep(std::move(o), unix_now(self));
  st.config.restored.retained.clear();
  if (!failed.empty())
    self->send(st.journal, journal_atom::value, finish_atom::value, std::move(failed));
  auto backfills = take_back_backfills(self);
  const std::size_t slots = std::max(per_slot.size(), backfills.size());
  per_slot.resize(slots);
  backfills.resize(slots);
  for (std::size_t slot = 0; slot < slots; ++slot)
    start_slot(self, slot, std::move(per_slot[slot]), std::move(backfills[slot]));
}

void take_in_guests(session_service_pointer self, std::vector<durable_ticket> guests,
                    std::vector<std::vector<durable_ticket>>* restored) {
  auto& st = self->state;
  std::size_t taken = 0;
  // Read waiting but told finished since, or not taken in: the journal forgets them.
  std::vector<std::uint64_t> finished;
  std::vector<std::uint64_t> retry;
  for (auto& t : guests) {
    if (st.book->find(t.id) != nullptr) continue;
    if (st.book->finished(t.id) != nullptr) {
      finished.push_back(t.id);
      continue;
    }
    std::vector<std::size_t> made;
    ticket_book::entry e;
    e.slots = local_slots(self, t, &made);
    if (!restored)
      for (const std::size_t slot : made) start_slot(self, slot, {}, {});
    if (e.slots.empty()) continue;  // none of its queues runs here (any more)
    for (const auto& p : t.ticket.players) e.players.push_back(p.id);
    // The store's claims keep one waiting ticket per player across the
    // partitions, so a player waiting here in another ticket is a view not
    // yet updated: most often that ticket's create, still on its way to
    // the store, which refuses it (the guest holds the claim). The guest is
    // asked again once that create has had its answer.
    std::uint64_t other = 0;
    bool pending = true;
    for (const player_id p : e.players)
      if (const std::uint64_t o = st.book->ticket_of(p); o != 0) {
        other = o;
        pending = pending && st.book->find(o)->pending;
      }
    if (other != 0) {
      if (!restored && pending && st.guest_retries[t.id]++ < max_guest_retries) {
        retry.push_back(t.id);
        continue;
      }
      st.guest_retries.erase(t.id);
      finished.push_back(t.id);
      log(log_level::warning, "sessions",
          "guest ticket " + session::format_public_id(t.id) +
              " not taken in: one of its players waits here in ticket " +
              session::format_public_id(other));
      continue;
    }
    st.guest_retries.erase(t.id);
    e.credential = st.book->intern(t.ticket.credential);
    e.pending = false;
    t.contested = true;
    const std::vector<std::uint32_t> slots = e.slots;
    st.book->add(t.id, std::move(e));
    ++taken;
    for (const std::uint32_t slot : slots) {
      if (restored) {
        if (restored->size() <= slot) restored->resize(slot + 1);
        (*restored)[slot].push_back(t);
        continue;
      }
      self->request(st.slots[slot], caf::infinite, create_atom::value, queued_ticket{t, false})
          .then([](std::uint64_t) {},
                [id = t.id](caf::error& err) {
                  log(log_level::warning, "sessions",
                      "guest ticket " + session::format_public_id(id) +
                          " refused by a queue: " + to_string(err));
                });
    }
  }
  if (!restored && !finished.empty())
    self->send(st.journal, journal_atom::value, forget_atom::value, std::move(finished));
  if (!retry.empty())
    self->delayed_send(self, guest_retry_after, guest_atom::value, std::move(retry));
  if (restored && taken > 0)
    log(log_level::info, "sessions",
        std::to_string(taken) + " tickets of other partitions wait in this one's queues again");
}

void ask_for_guests(session_service_pointer self, const std::vector<std::uint64_t>& ids) {
  auto& st = self->state;
  std::vector<std::uint64_t> fresh;
  for (const std::uint64_t id : ids)
    if (st.book->find(id) == nullptr && st.book->finished(id) == nullptr)
      fresh.push_back(id);
    else
      st.guest_retries.erase(id);
  if (fresh.empty()) return;
  self->request(st.journal, caf::infinite, journal_atom::value, guest_atom::value, fresh)
      .then(
          [self, fresh](std::vector<durable_ticket>& guests) {
            // Those no longer waiting are not asked again.
            std::set<std::uint64_t> read;
            for (const auto& t : guests) read.insert(t.id);
            for (const std::uint64_t id : fresh)
              if (!read.count(id)) self->state.guest_retries.erase(id);
            take_in_guests(self, guests, nullptr);
          },
          [self, fresh](caf::error& err) {
            for (const std::uint64_t id : fresh) self->state.guest_retries.erase(id);
            // The guest rows stay: the partition's next start takes them in.
            log(log_level::error, "sessions",
                "new guest tickets could not be read: " + to_string(err));
          });
}

void left_elsewhere(session_service_pointer self, std::vector<ticket_outcome>& outcomes) {
  auto& st = self->state;
  std::vector<std::uint64_t> gone;
  for (auto& ev : outcomes) {
    if (ev.state == session::ticket_state::waiting || ev.to_game_server) continue;
    // Kept among the outcomes even when not here (yet): the read of its
    // guest row may be on its way, having found it waiting before this
    // outcome was written; take_in_guests then leaves it out. The journal
    // forgets it either way (its queue may have taken it back from the
    // store after a lost match, before this service took it in).
    ticket_left(self, ev);
    gone.push_back(ev.ticket);
  }
  if (!gone.empty()) self->send(st.journal, journal_atom::value, forget_atom::value, gone);
}

void matches_lost(session_service_pointer self, const std::vector<ticket_outcome>& outcomes) {
  auto& st = self->state;
  std::set<std::string> queues;
  for (const auto& o : outcomes) {
    st.claims->release(o.ticket);
    queues.insert(o.queue);
  }
  for (const auto& q : queues)
    if (const auto at = st.registry->find(q)) self->send(st.slots[*at], restore_atom::value);
}

}  // namespace mm::actors
