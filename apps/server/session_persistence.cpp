#include "session_persistence.hpp"

#include "mm/actors/ticket_codec.hpp"
#include "session_json.hpp"

namespace mm::server {

namespace {

// The config a ticket of queue `name` runs under now, or nothing.
const session::queue_config* queue_of(const session_settings& s, const std::string& name) {
  const std::string base = name.substr(0, name.find('.'));  // a shard's queue
  for (const auto& q : s.queues)
    if (q.name == base) return &q;
  if (s.queue_template.empty()) return nullptr;
  for (const auto& q : s.queues)
    if (q.name == s.queue_template) return &q;
  return nullptr;
}

}  // namespace

restored_session restore_session_state(const session_state_rows& rows, const session_settings& s,
                                       std::int64_t now_unix_ms) {
  restored_session out;
  for (const auto& row : rows.tickets) {
    ticket_body body;
    try {
      body = read_ticket_body(parse_body(row.ticket));
    } catch (const bad_request&) {
      ++out.unreadable;
      continue;
    }
    const session::queue_config* q = queue_of(s, row.queue);
    if (q == nullptr) {
      ++out.unknown_queue;
      continue;
    }
    const std::int64_t give_up_ms = body.ticket.give_up_after_ms != 0
                                        ? body.ticket.give_up_after_ms
                                        : static_cast<std::int64_t>(q->give_up_after.count());
    if (row.created_unix_ms + give_up_ms <= now_unix_ms) {
      ++out.past_give_up;
      continue;
    }
    out.tickets.created.push_back(
        {row.id, row.queue, "", row.created_unix_ms, actors::encode_ticket(body.ticket)});
  }
  for (const auto& l : rows.lobbies)
    out.lobbies.push_back(
        {l.id, l.mode, l.datacenter, l.max_players, l.players, l.created_by_find, l.owner});
  return out;
}

session_state_rows session_state_of(const std::vector<actors::lobby_registration>& lobbies) {
  session_state_rows rows;
  for (const auto& l : lobbies)
    rows.lobbies.push_back(
        {l.id, l.mode, l.datacenter, l.max_players, l.players, l.created_by_find, l.credential});
  return rows;
}

}  // namespace mm::server
