// Reads the player table for the database scan (docs/design.md, Freshness) on its own read-only
// connection, so it can run on a thread other than the one answering queries.
// It only reads: the rows it returns are applied to the engine in one step by
// the engine's owner (engine::apply_scan).
//
// The pointers and batches are row_scanner's; this class reads SQLite.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "mm/engine/player_row.hpp"
#include "mm/storage/database.hpp"
#include "mm/storage/row_scanner.hpp"

namespace mm {

class player_scanner final : public row_scanner {
 public:
  // `source` is the table or view to read (see docs/persistence.md): it must
  // have the columns id, mmr, attr0..attr3, payload and is_bot. Throws
  // store_error when the database or the source cannot be used.
  // With shard_count > 1 only players with id mod shard_count == shard_index are
  // read: the share of an instance in a set of shard_count instances.
  player_scanner(const std::string& path, const std::string& source, std::uint64_t seed,
                 int busy_timeout_ms = 5000, std::uint32_t shard_count = 1,
                 std::uint32_t shard_index = 0);
  ~player_scanner() override;

  // A row is taken when a hash of its id and `seed` falls under wanted / rows.
  scan_result sample(std::uint32_t wanted, std::uint64_t seed) override;

 private:
  class statement;
  std::optional<std::pair<std::int64_t, std::int64_t>> id_range() override;
  void read_after(std::int64_t after, std::uint32_t limit, scan_result& out,
                  std::int64_t& last_id) override;
  void read_up_to(std::int64_t upto, std::uint32_t limit, scan_result& out,
                  std::int64_t& last_id) override;
  std::string describe() const override;
  void read(statement& q, scan_result& out, std::int64_t& last_id);
  // Binds the id bound and the limit, reads, and resets the statement.
  void read_from(statement& q, std::int64_t bound, std::uint32_t limit, scan_result& out,
                 std::int64_t& last_id);

  database db_;
  std::string source_;
  std::string shard_filter_;  // " AND id % N = k", or empty
  std::unique_ptr<statement> bounds_, after_, up_to_;
};

}  // namespace mm
