#include "mm/actors/event_stream.hpp"

#include "mm/actors/ticket_codec.hpp"

namespace mm::actors {

std::optional<ticket_outcome> event_of_row(const journal_event& row,
                                           const std::string& credential) {
  auto o = row.event.empty() ? std::optional<ticket_outcome>(ticket_outcome{})
                             : decode_outcome(row.event);
  if (!o) return std::nullopt;
  if (row.event.empty()) {  // a creation: waiting in its (first) queue
    o->queue = row.queue;
    o->ticket = row.ticket;
  }
  o->credential = row.credential.empty() ? credential : row.credential;
  o->seq = row.seq;
  o->at_unix_ms = row.at_unix_ms;
  return o;
}

std::size_t pull_stream_events(player_store& store, const std::string& stream,
                               ticket_event_feed& feed, std::size_t max) {
  const auto rows = store.read_stream_events(stream, feed.last_seq(), max);
  std::vector<ticket_outcome> events;
  events.reserve(rows.size());
  for (const auto& row : rows)
    if (auto o = event_of_row(row)) events.push_back(std::move(*o));
  feed.append(events);
  // A row that did not decode still moves the feed past its number.
  if (!rows.empty()) feed.continue_from(rows.back().seq);
  return rows.size();
}

}  // namespace mm::actors
