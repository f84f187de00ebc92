#include "mm/actors/session_service.hpp"

#include <algorithm>

#include "mm/actors/errors.hpp"

namespace mm::actors {

namespace {

// Names a queue may get on first use: what fits a URL path and a metric label.
bool valid_queue_name(const std::string& name) {
  return !name.empty() && name.size() <= 64 && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
}

session_interfaces::queue spawn_queue(session_service_pointer self, session::queue_config q) {
  auto& st = self->state;
  const std::size_t number = st.queues.size() + 1;
  session_queue_actor_config c;
  c.latency = st.config.latency;
  c.seed = st.config.seed + number;
  c.finished_kept = st.config.finished_kept;
  c.ticket_id_base = static_cast<std::uint64_t>(number) << ticket_queue_shift;
  st.by_name[q.name] = st.queues.size();
  c.queue = std::move(q);
  auto h = self->spawn<caf::linked>(session_queue_actor, std::move(c));
  st.queues.push_back(h);
  return h;
}

// The queue a ticket id belongs to, or an invalid handle.
session_interfaces::queue queue_of(const session_service_state& st, std::uint64_t ticket) {
  const std::uint64_t number = ticket >> ticket_queue_shift;
  if (number == 0 || number > st.queues.size()) return {};
  return st.queues[number - 1];
}

caf::error no_ticket(std::uint64_t id) {
  return make_error(errc::invalid_argument, "ticket: no ticket " + std::to_string(id));
}

}  // namespace

session_interfaces::service::behavior_type session_service(session_service_pointer self,
                                                           session_service_config config) {
  self->state.config = std::move(config);
  for (const auto& q : self->state.config.queues) spawn_queue(self, q);
  return {
      [self](create_atom, const std::string& name, const session_ticket& t,
             const session_interfaces::owner& owner) -> caf::result<std::uint64_t> {
        auto& st = self->state;
        session_interfaces::queue q;
        if (const auto it = st.by_name.find(name); it != st.by_name.end()) {
          q = st.queues[it->second];
        } else if (!st.config.default_queue) {
          return make_error(errc::invalid_argument, "queue: no queue '" + name.substr(0, 64) + "'");
        } else if (!valid_queue_name(name)) {
          return make_error(errc::invalid_argument,
                            "queue: a new queue's name is 1 to 64 of a-z, 0-9, _ and -");
        } else if (st.queues.size() >= st.config.max_queues) {
          return make_error(errc::invalid_argument,
                            "queue: no queue '" + name + "', and the server runs its maximum of " +
                                std::to_string(st.config.max_queues) + " queues");
        } else {
          session::queue_config c = *st.config.default_queue;
          c.name = name;
          q = spawn_queue(self, std::move(c));
        }
        return self->delegate(q, create_atom::value, t, owner);
      },
      [self](cancel_atom, std::uint64_t id) -> caf::result<bool> {
        const auto q = queue_of(self->state, id);
        if (!q) return false;
        return self->delegate(q, cancel_atom::value, id);
      },
      [self](status_atom, std::uint64_t id) -> caf::result<ticket_outcome> {
        const auto q = queue_of(self->state, id);
        if (!q) return no_ticket(id);
        return self->delegate(q, status_atom::value, id);
      },
      [self](info_atom) -> caf::result<std::vector<session_queue_report>> {
        auto& st = self->state;
        auto rp = self->make_response_promise<std::vector<session_queue_report>>();
        if (st.queues.empty()) {
          rp.deliver(std::vector<session_queue_report>{});
          return rp;
        }
        // Gathered in queue order: each answer has its slot.
        auto reports = std::make_shared<std::vector<session_queue_report>>(st.queues.size());
        auto left = std::make_shared<std::size_t>(st.queues.size());
        for (std::size_t i = 0; i < st.queues.size(); ++i)
          self->request(st.queues[i], caf::infinite, info_atom::value)
              .then(
                  [=](session_queue_report& r) mutable {
                    (*reports)[i] = std::move(r);
                    if (--*left == 0) rp.deliver(std::move(*reports));
                  },
                  [=](caf::error& e) mutable {
                    if (*left > 0) {
                      *left = 0;
                      rp.deliver(std::move(e));
                    }
                  });
        return rp;
      },
  };
}

}  // namespace mm::actors
