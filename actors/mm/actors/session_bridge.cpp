#include "mm/actors/session_bridge.hpp"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "mm/actors/errors.hpp"
#include "mm/session/public_id.hpp"

namespace mm::actors {

namespace {

using answer = caf::expected<ticket_outcome>;
using wake_atom = caf::atom_constant<caf::atom("sbwake")>;
using bridge_release_atom = caf::atom_constant<caf::atom("sbrelease")>;
using create_sweep_atom = caf::atom_constant<caf::atom("sbsweep")>;
using create_answer = caf::expected<std::uint64_t>;

struct long_poll {
  std::uint64_t seq = 0;
  caf::actor_clock::time_point until;
  call_once<answer> done;
};

struct bridge_state {
  bridge_state() = default;  // not an aggregate (CAF)
  session_interfaces::service service;
  caf::timespan timeout{}, recheck{};
  std::unordered_map<std::uint64_t, std::vector<long_poll>> polls;  // by ticket
  std::unordered_set<std::uint64_t> owned;  // created here and not yet told to have left
  std::uint64_t next = 0;
  bool released = false;
  // Creates asked and not answered yet, with deadlines of the bridge's own
  // (owed_calls.hpp; docs/performance.md, "HTTP with hundreds of creates in
  // flight"): each is answered at the latest between `timeout` and
  // 1.125 × `timeout` after it came.
  owed_calls<create_answer> creates_owed;
  static inline const char* name = "mm.session_bridge";
};
using bridge_actor = caf::stateful_actor<bridge_state>;

void answer_with_status(bridge_actor* self, std::uint64_t ticket, call_once<answer> done) {
  self->request(self->state.service, self->state.timeout, status_atom::value, ticket)
      .then([done](ticket_outcome& o) { done(std::move(o)); },
            [done](caf::error& e) { done(std::move(e)); });
}

// The long-poll `seq` of `ticket`, taken out of the books; nothing when it
// was answered already.
std::optional<long_poll> take(bridge_state& st, std::uint64_t ticket, std::uint64_t seq) {
  const auto it = st.polls.find(ticket);
  if (it == st.polls.end()) return std::nullopt;
  auto& list = it->second;
  const auto p = std::find_if(list.begin(), list.end(), [&](auto& x) { return x.seq == seq; });
  if (p == list.end()) return std::nullopt;
  long_poll out = std::move(*p);
  list.erase(p);
  if (list.empty()) st.polls.erase(it);
  return out;
}

// Checks `ticket` again at its next wake: the end of the wait, or sooner for
// a ticket someone else owns (nobody tells the bridge when it leaves).
void schedule(bridge_actor* self, std::uint64_t ticket, const long_poll& p) {
  auto& st = self->state;
  auto in = p.until - self->clock().now();
  if (!st.owned.count(ticket)) in = std::min<caf::timespan>(in, st.recheck);
  self->delayed_send(self, std::max<caf::timespan>(in, caf::timespan{0}), wake_atom::value, ticket,
                     p.seq);
}

// The create `seq`'s answer, unless the sweep gave it its timeout already.
void answer_create(bridge_actor* self, std::uint64_t seq, create_answer a) {
  self->state.creates_owed.answer(seq, std::move(a));
}

// Books a create as owed until the bridge's timeout; returns its number.
std::uint64_t owe_create(bridge_actor* self, call_once<create_answer> done) {
  auto& st = self->state;
  return st.creates_owed.owe(std::move(done), self->clock().now() + st.timeout, [=] {
    self->delayed_send(self, self->state.timeout / 8, create_sweep_atom::value);
  });
}

caf::behavior bridge(bridge_actor* self, session_interfaces::service service, caf::timespan timeout,
                     caf::timespan recheck) {
  self->state.service = std::move(service);
  self->state.timeout = timeout;
  self->state.recheck = recheck;
  return {
      [self](session_bridge_call& call) { call.run(self, self->state.service); },
      // A ticket created here left its queue.
      [self](ticket_atom, const ticket_outcome& o) {
        auto& st = self->state;
        st.owned.erase(o.ticket);
        const auto it = st.polls.find(o.ticket);
        if (it == st.polls.end()) return;
        const auto list = std::move(it->second);
        st.polls.erase(it);
        for (const auto& p : list) p.done(o);
      },
      [self](wake_atom, std::uint64_t ticket, std::uint64_t seq) {
        auto& st = self->state;
        auto p = take(st, ticket, seq);
        if (!p) return;
        if (st.released || self->clock().now() >= p->until) {
          answer_with_status(self, ticket, p->done);
          return;
        }
        // Someone else's ticket: ask, and wait on while it waits.
        self->request(st.service, st.timeout, status_atom::value, ticket)
            .then(
                [self, ticket, p = *p](ticket_outcome& o) {
                  auto& s = self->state;
                  if (o.state != session::ticket_state::waiting || s.released) {
                    p.done(std::move(o));
                    return;
                  }
                  s.polls[ticket].push_back(p);
                  schedule(self, ticket, p);
                },
                [done = p->done](caf::error& e) { done(std::move(e)); });
      },
      [self](create_sweep_atom) {
        if (self->state.creates_owed.sweep(self->clock().now()))
          self->delayed_send(self, self->state.timeout / 8, create_sweep_atom::value);
      },
      [self](bridge_release_atom) {
        auto& st = self->state;
        st.released = true;
        auto all = std::move(st.polls);
        st.polls.clear();
        for (auto& [ticket, list] : all)
          for (auto& p : list) answer_with_status(self, ticket, p.done);
      },
  };
}

bridge_actor* as_bridge(caf::event_based_actor* self) {
  return static_cast<bridge_actor*>(self);
}

}  // namespace

session_bridge::session_bridge(caf::actor_system& sys, session_interfaces::service service,
                               std::chrono::milliseconds timeout, std::chrono::milliseconds recheck,
                               std::shared_ptr<const session_partitions> here)
    : actor_(sys.spawn(bridge, std::move(service), caf::timespan(timeout), caf::timespan(recheck))),
      timeout_(timeout),
      here_(std::move(here)) {}

session_bridge::~session_bridge() {
  caf::anon_send_exit(actor_, caf::exit_reason::user_shutdown);
}

void session_bridge::create(std::string queue, session_ticket ticket,
                            callback<std::uint64_t> done) {
  call_once<caf::expected<std::uint64_t>> once(std::move(done));
  caf::anon_send(
      actor_, session_bridge_call{
                  [once, queue = std::move(queue), ticket = std::move(ticket)](
                      caf::event_based_actor* base, const session_interfaces::service& svc) {
                    bridge_actor* self = as_bridge(base);
                    const auto owner = caf::actor_cast<session_interfaces::owner>(self);
                    const std::uint64_t seq = owe_create(self, once);
                    // An answer lost to a crash leaves CAF's response handler
                    // behind (tens of bytes); the sweep still answers the caller.
                    self->request(svc, caf::infinite, create_atom::value, queue, ticket, owner)
                        .then(
                            [self, seq](std::uint64_t id) {
                              // Owned even when it came after the timeout: the
                              // ticket exists, and its end is told here.
                              self->state.owned.insert(id);
                              answer_create(self, seq, id);
                            },
                            [self, seq](caf::error& e) { answer_create(self, seq, std::move(e)); });
                  }});
}

void session_bridge::status(std::uint64_t ticket, std::chrono::milliseconds wait,
                            std::optional<std::string> credential, callback<ticket_outcome> done) {
  call_once<answer> once(std::move(done));
  // What the service would answer at once, from its books, here: the same
  // books, so the same answer (a long-poll of a waiting ticket still goes
  // to the bridge's actor, which waits).
  if (here_) {
    if (auto o = here_->status_here(ticket)) {
      if (credential && o->credential != *credential) {
        answered_here_.fetch_add(1, std::memory_order_relaxed);
        return once(
            make_error(errc::not_found, "ticket: no ticket " + session::format_public_id(ticket)));
      }
      if (o->state != session::ticket_state::waiting || wait.count() <= 0) {
        answered_here_.fetch_add(1, std::memory_order_relaxed);
        return once(std::move(*o));
      }
    }
  }
  caf::anon_send(
      actor_,
      session_bridge_call{[once, ticket, wait, credential](caf::event_based_actor* base,
                                                           const session_interfaces::service& svc) {
        bridge_actor* self = as_bridge(base);
        self->request(svc, self->state.timeout, status_atom::value, ticket)
            .then(
                [self, once, ticket, wait, credential](ticket_outcome& o) {
                  auto& st = self->state;
                  if (credential && o.credential != *credential) {
                    once(make_error(errc::not_found,
                                    "ticket: no ticket " + session::format_public_id(ticket)));
                    return;
                  }
                  if (o.state != session::ticket_state::waiting || wait.count() <= 0 ||
                      st.released) {
                    once(std::move(o));
                    return;
                  }
                  long_poll p{st.next++, self->clock().now() + wait, once};
                  st.polls[ticket].push_back(p);
                  schedule(self, ticket, p);
                },
                [once](caf::error& e) { once(std::move(e)); });
      }});
}

void session_bridge::release_waiters() {
  caf::anon_send(actor_, bridge_release_atom::value);
}

void session_bridge::run_later(std::chrono::milliseconds delay, std::function<void()> work) {
  session_bridge_call now{
      [work](caf::event_based_actor*, const session_interfaces::service&) { work(); }};
  if (delay.count() <= 0) return caf::anon_send(actor_, std::move(now));
  caf::anon_send(actor_, session_bridge_call{[delay, now](caf::event_based_actor* self,
                                                          const session_interfaces::service&) {
                   self->delayed_send(self, delay, now);
                 }});
}

}  // namespace mm::actors
