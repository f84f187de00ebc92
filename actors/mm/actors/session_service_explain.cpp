#include "mm/actors/session_service_explain.hpp"

#include <memory>

#include "mm/actors/errors.hpp"
#include "mm/session/public_id.hpp"

namespace mm::actors {

bool take_explain(session_service_pointer self) {
  auto& st = self->state;
  return st.explain_rate.take(self->clock().now(), st.config.explains_per_s,
                              st.config.explains_per_s);
}

caf::error explaining_too_fast(session_service_pointer self) {
  return make_error(errc::limit_reached,
                    "explain: more than " +
                        std::to_string(static_cast<long long>(self->state.config.explains_per_s)) +
                        " explanations a second on this server (sessions.explains_per_s): "
                        "slow down");
}

void hide_candidates(session_service_pointer self, session::explanation& e,
                     const std::string& credential) {
  if (credential.empty()) return;
  auto& book = *self->state.book;
  for (auto& c : e.nearest) {
    const ticket_book::entry* t = book.find(c.ticket);
    if (t == nullptr || book.credential(t->credential) != credential) c.ticket = 0;
  }
}

caf::result<std::vector<session::explanation>> route_ticket_explain(session_service_pointer self,
                                                                    std::uint64_t id,
                                                                    std::uint32_t limit,
                                                                    const std::string& credential) {
  auto& st = self->state;
  if (!take_explain(self)) return explaining_too_fast(self);
  const ticket_book::entry* e = st.book->find(id);
  if (e == nullptr || (!credential.empty() && st.book->credential(e->credential) != credential))
    return make_error(errc::not_found, "ticket: no waiting ticket " +
                                           session::format_public_id(id) +
                                           " (its state says what became of it)");
  // Each of its queues in turn; one restarting (or that let it go a moment
  // ago) is left out, and when none answers, the last error is the answer.
  struct gathered {
    std::vector<session::explanation> all;
    std::size_t left = 0;
    caf::error last;
  };
  auto g = std::make_shared<gathered>();
  g->left = e->slots.size();
  auto rp = self->make_response_promise<std::vector<session::explanation>>();
  auto finish = [self, g, rp, credential]() mutable {
    if (--g->left > 0) return;
    if (g->all.empty() && g->last) {
      rp.deliver(std::move(g->last));
      return;
    }
    for (auto& x : g->all) hide_candidates(self, x, credential);
    rp.deliver(std::move(g->all));
  };
  for (const std::uint32_t slot : e->slots)
    self->request(st.slots[slot], caf::infinite, explain_atom::value, id, limit)
        .then(
            [g, finish](session::explanation& x) mutable {
              g->all.push_back(std::move(x));
              finish();
            },
            [g, finish](caf::error& err) mutable {
              g->last = std::move(err);
              finish();
            });
  return rp;
}

}  // namespace mm::actors
