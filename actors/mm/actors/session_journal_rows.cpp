// What the session journal's rows hold, decoded (session_journal.hpp): the
// waiting tickets and running matches a start or a queue reads back, the
// journal's contents at a start, and the rows of before version 9 moved.
#include <limits>
#include <unordered_map>

#include "mm/actors/event_stream.hpp"
#include "mm/actors/session_journal.hpp"
#include "mm/actors/ticket_codec.hpp"
#include "mm/storage/name_list.hpp"

namespace mm::actors {

void shift_times(backfill_state& b, std::int64_t by) {
  b.registered_ms += by;
  for (auto& r : b.reservations) {
    r.placed_ms += by;
    r.expires_ms += by;
    for (auto& c : r.created_ms) c += by;
  }
}

std::string join_queues(const std::vector<std::string>& queues) {
  return join_names(queues);
}

std::vector<std::string> split_queues(const std::string& text) {
  return split_names(text);
}

std::uint64_t serial_of(const session::id_permutation* ids, std::uint64_t public_id) {
  return ids ? ids->decode(public_id) : public_id;
}

std::uint64_t public_of(const session::id_permutation* ids, std::uint64_t serial) {
  return ids ? ids->encode(serial) : serial;
}

std::vector<durable_ticket> decode_waiting(const std::vector<journal_ticket>& rows,
                                           const session::id_permutation* ids,
                                           std::int64_t unix_epoch_ms, std::size_t* unreadable) {
  std::vector<durable_ticket> out;
  out.reserve(rows.size());
  for (const auto& r : rows) {
    auto t = decode_ticket(r.ticket);
    auto queues = split_queues(r.queues);
    if (!t || queues.empty()) {
      if (unreadable) ++*unreadable;
      continue;
    }
    t->credential = r.credential;
    out.push_back({public_of(ids, r.id), std::move(queues), r.created_unix_ms - unix_epoch_ms,
                   std::move(*t)});
  }
  return out;
}

std::vector<backfill_state> decode_backfills(const std::vector<journal_backfill>& rows,
                                             std::int64_t unix_epoch_ms, std::size_t* unreadable) {
  std::vector<backfill_state> out;
  for (const auto& r : rows) {
    auto b = decode_backfill(r.state);
    if (!b || b->registration.queue != r.queue || b->registration.match_id != r.match_id) {
      if (unreadable) ++*unreadable;
      continue;
    }
    b->registration.credential = r.credential;
    shift_times(*b, -unix_epoch_ms);
    out.push_back(std::move(*b));
  }
  return out;
}

std::size_t adopt_v8_journal(player_store& store, const std::string& service,
                             const session::id_permutation& ids) {
  const std::vector<journal_v8_row> rows = store.read_v8_journal(service);
  if (rows.empty()) return 0;
  journal_batch batch;
  for (const auto& r : rows) {
    journal_ticket t = r.ticket;
    t.id = ids.decode(r.ticket.id);
    if (r.state != 0) batch.finished.push_back({t.id, {}, r.state, r.finished_unix_ms, r.outcome});
    batch.created.push_back(std::move(t));
  }
  store.write_journal(service, batch);
  store.drop_v8_journal(service);
  return rows.size();
}

session_journal_contents load_session_journal(player_store& store, const std::string& service,
                                              const session::id_permutation* ids,
                                              std::int64_t unix_epoch_ms,
                                              std::chrono::milliseconds retention,
                                              std::size_t max_retained,
                                              const std::string& event_stream, bool guests) {
  journal_read r;
  r.event_stream = event_stream;
  r.retained_since_unix_ms = unix_epoch_ms - retention.count();
  r.max_retained = max_retained;
  r.events_after = std::numeric_limits<std::int64_t>::max();  // events: none needed here
  r.max_events = 0;
  const journal_contents rows = store.read_journal(service, r);
  session_journal_contents out;
  out.last_seq = rows.last_seq;
  out.waiting = decode_waiting(rows.waiting, ids, unix_epoch_ms, &out.unreadable);
  out.backfills = decode_backfills(rows.backfills, unix_epoch_ms, &out.unreadable);
  if (guests)
    out.guests =
        decode_waiting(store.read_guest_tickets(service), ids, unix_epoch_ms, &out.unreadable);
  for (auto it = rows.retained.rbegin(); it != rows.retained.rend(); ++it) {
    auto o = decode_outcome(it->outcome);
    if (!o) {
      ++out.unreadable;
      continue;
    }
    o->credential = it->credential;
    out.retained.push_back(std::move(*o));
  }
  // The events, for those who follow them from a sequence number of the last run.
  std::unordered_map<std::uint64_t, const std::string*> credentials;  // by public id
  credentials.reserve(out.waiting.size() + out.retained.size());
  for (const auto& t : out.waiting) credentials.emplace(t.id, &t.ticket.credential);
  for (const auto& o : out.retained) credentials.emplace(o.ticket, &o.credential);
  const auto credential_of = [&](std::uint64_t ticket) {
    const auto it = credentials.find(ticket);
    return it == credentials.end() ? std::string() : *it->second;
  };
  journal_read events;
  events.retained_since_unix_ms = std::numeric_limits<std::int64_t>::max();
  events.events_after = rows.last_seq > max_retained ? rows.last_seq - max_retained : 0;
  events.max_events = max_retained;
  for (const auto& row : store.read_journal(service, events).events) {
    if (row.at_unix_ms < r.retained_since_unix_ms) continue;
    auto o = event_of_row(row, row.credential.empty() ? credential_of(row.ticket) : std::string());
    if (!o) {
      ++out.unreadable;
      continue;
    }
    out.events.push_back(std::move(*o));
  }
  return out;
}

}  // namespace mm::actors
