// The service's control steps: a new configuration (session_reconfigure.hpp)
// and a graceful stop.
#include "mm/actors/errors.hpp"
#include "mm/actors/session_service.hpp"
#include "mm/engine/error.hpp"

namespace mm::actors {

caf::result<std::uint32_t> reconfigure_queues(session_service_pointer self, queue_set& next) {
  auto& st = self->state;
  // Each config is tried first, as at the start: one that cannot run is
  // refused whole, and no queue changes.
  try {
    for (const auto& q : next.queues) session::session_queue(q, st.config.latency, st.config.seed);
    if (next.default_queue)
      session::session_queue(*next.default_queue, st.config.latency, st.config.seed);
  } catch (const mm::error& e) {
    return make_error(e.code(), e.what());
  }
  const auto changed = st.registry->reconfigure(next.queues, next.default_queue);
  st.config.queues = std::move(next.queues);
  st.config.default_queue = std::move(next.default_queue);
  auto rp = self->make_response_promise<std::uint32_t>();
  struct tally {
    std::size_t left = 0;
    caf::error first_error;
  };
  auto t = std::make_shared<tally>();
  t->left = changed.size() + 1;
  auto one_done = [rp, t, n = static_cast<std::uint32_t>(changed.size())]() mutable {
    if (--t->left > 0) return;
    if (t->first_error)
      rp.deliver(std::move(t->first_error));
    else
      rp.deliver(n);
  };
  for (const std::size_t slot : changed)
    self->request(st.slots[slot], caf::infinite, configure_atom::value, st.registry->config(slot))
        .then([one_done](bool) mutable { one_done(); },
              [one_done, t](caf::error& e) mutable {
                if (!t->first_error) t->first_error = std::move(e);
                one_done();
              });
  one_done();
  return rp;
}

// A graceful stop: every queue stops, then the journal writes what it holds.
caf::result<bool> save_and_stop_queues(session_service_pointer self) {
  auto& st = self->state;
  if (st.saving) return make_error(errc::invalid_argument, "the service is stopping already");
  st.saving = true;
  auto rp = self->make_response_promise<bool>();
  auto left = std::make_shared<std::size_t>(st.slots.size() + 1);
  auto one_done = [self, rp, left]() mutable {
    if (--*left > 0) return;
    self->request(self->state.journal, caf::infinite, journal_atom::value, sync_atom::value)
        .then([rp](bool ok) mutable { rp.deliver(ok); },
              [rp](caf::error& e) mutable { rp.deliver(std::move(e)); });
  };
  for (const auto& slot : st.slots)
    self->request(slot, caf::infinite, stop_atom::value)
        .then([one_done](bool) mutable { one_done(); },
              [one_done](caf::error&) mutable { one_done(); });
  one_done();
  return rp;
}

}  // namespace mm::actors
