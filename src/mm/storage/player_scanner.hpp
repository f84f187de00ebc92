// Reads the player table for the database scan (docs/design.md, Freshness) on its own read-only
// connection, so it can run on a thread other than the one answering queries.
// It only reads: the rows it returns are applied to the engine in one step by
// the engine's owner (engine::apply_scan).
//
// Each batch reads from its own persistent scan pointer, in id order, wrapping
// at the end of the table. Pointers start at random ids and each is moved to a
// new random id with a 1% chance per scan, so over time the whole table is
// sampled and no region is favoured for long.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mm/engine/player_row.hpp"
#include "mm/engine/random.hpp"
#include "mm/storage/database.hpp"

namespace mm {

struct scan_result {
  std::vector<player_row> rows;
  std::uint64_t unreadable = 0;      // rows whose columns could not be read
  std::vector<std::string> reports;  // the first few unreadable rows, explained
  std::uint32_t batches = 0;
  std::uint32_t wraps = 0;  // batches that reached the end and went on from the start
  double seconds = 0;
};

class player_scanner {
 public:
  static constexpr std::size_t max_reports = 10;
  static constexpr double repoint_chance = 0.01;

  // `source` is the table or view to read (see docs/persistence.md): it must
  // have the columns id, mmr, attr0..attr3, payload and is_bot. Throws
  // store_error when the database or the source cannot be used.
  // With shard_count > 1 only players with id mod shard_count == shard_index are
  // read: the share of an instance in a set of shard_count instances.
  player_scanner(const std::string& path, const std::string& source, std::uint64_t seed,
                 int busy_timeout_ms = 5000, std::uint32_t shard_count = 1,
                 std::uint32_t shard_index = 0);

  // Reads about `fetch` rows in batches of `batch_size`.
  scan_result scan(std::uint32_t fetch, std::uint32_t batch_size);
  // The same into `out`, reusing its storage: a result handed back by the
  // engine's owner after applying it saves allocating (and faulting in) the
  // next one.
  void scan_into(std::uint32_t fetch, std::uint32_t batch_size, scan_result& out);

  // A sample of about `wanted` rows spread over the whole table (or this
  // shard) whatever the order of the ids: a row is taken when a hash of its id
  // and `seed` falls under wanted / rows, so every row has the same chance and
  // neighbours are independent. The scan's runs of consecutive ids are not:
  // where ids follow signup time and veterans are stronger, a few runs misjudge
  // the MMR distribution. This reads the whole table once (linear in its size),
  // so it sizes a cold start, not every tick. The rows come in random order.
  scan_result sample(std::uint32_t wanted, std::uint64_t seed);

  const std::vector<std::int64_t>& pointers() const { return pointers_; }

 private:
  class statement;
  void read(statement& q, scan_result& out, std::int64_t& last_id);

  database db_;
  std::string source_;
  std::string shard_filter_;  // " AND id % N = k", or empty
  rng rng_;
  std::vector<std::int64_t> pointers_;  // last id read by each batch's pointer
};

// A table or view name usable in SQL: letters, digits and '_', not starting with
// a digit. Anything else is refused, so the name can be quoted into SQL.
bool valid_sql_identifier(const std::string& name);

}  // namespace mm
