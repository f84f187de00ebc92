// A node's event feed read from the store (docs/persistence.md, "One
// sequence for several services"): when the session queues run in
// partitions, possibly on other nodes, their events are one stream in the
// store, numbered in commit order; the feed follows it by number, so it
// holds every partition's events in order, each once, whichever node wrote
// them.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "mm/actors/session_messages.hpp"
#include "mm/actors/ticket_event_feed.hpp"
#include "mm/storage/player_store.hpp"

namespace mm::actors {

// The event a row holds (a new ticket's row has no bytes: waiting in its
// first queue); nothing when its bytes do not decode. The credential is the
// row's, or `credential` when the row has none.
std::optional<ticket_outcome> event_of_row(const journal_event& row,
                                           const std::string& credential = {});

// Appends to `feed` the stream's events after the feed's last, at most
// `max` of them; the number of rows read (some may not decode: they are
// skipped, and the feed goes on past them). Throws mm::error when the
// store cannot be read.
std::size_t pull_stream_events(player_store& store, const std::string& stream,
                               ticket_event_feed& feed, std::size_t max);

}  // namespace mm::actors
