// The matchmaker state table (docs/design.md, Persistence): one snapshot row per instance, written
// in one transaction so a crash mid-write leaves the previous snapshot intact, and a side table
// where unreadable snapshots are kept for inspection.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mm/storage/database.hpp"

namespace mm {

struct stored_state {
  std::int64_t persisted_at_unix_ms = 0;
  std::uint32_t payload_version = 0;
  std::string payload;
};

struct rejected_state {
  std::int64_t set_aside_at_unix_ms = 0;
  std::string reason;
  std::int64_t persisted_at_unix_ms = 0;
  std::string payload;
};

void write_state(database& db, const std::string& instance_id, const stored_state& s);
std::optional<stored_state> read_state(database& db, const std::string& instance_id);

// Moves the instance's snapshot to the rejected table with the reason, in one
// transaction: the next write cannot overwrite it silently.
void set_aside_state(database& db, const std::string& instance_id, const std::string& reason,
                     std::int64_t now_unix_ms);

std::vector<rejected_state> rejected_states(database& db, const std::string& instance_id);

}  // namespace mm
