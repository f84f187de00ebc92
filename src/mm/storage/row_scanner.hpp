// The scan's reader, whatever the database (docs/design.md, Freshness):
// persistent pointers in id order, wrapping at the end, each moved to a random
// id with a 1% chance per scan, so over time the whole table is sampled; and a
// uniform sample of the whole table for a cold start. SQLite's is
// player_scanner, PostgreSQL's pg_scanner; both read the same rows for the
// same seed and table.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "mm/engine/player_row.hpp"
#include "mm/engine/random.hpp"

namespace mm {

struct scan_result {
  std::vector<player_row> rows;
  std::uint64_t unreadable = 0;      // rows whose columns could not be read
  std::vector<std::string> reports;  // the first few unreadable rows, explained
  std::uint32_t batches = 0;
  std::uint32_t wraps = 0;  // batches that reached the end and went on from the start
  double seconds = 0;
};

// Which rows a scanner reads, and how it draws its pointers.
struct scan_options {
  std::string source = "players";  // table or view: id, mmr, attr0..attr3, payload, is_bot
  std::uint64_t seed = 1;          // of the scan pointers
  // Only players with id mod shard_count == shard_index: an instance's share.
  std::uint32_t shard_count = 1;
  std::uint32_t shard_index = 0;
};

// The scan's loop, shared by every database so that both read the same rows
// for the same seed and table: a database supplies the id range and two
// ordered reads.
class row_scanner {
 public:
  static constexpr std::size_t max_reports = 10;
  static constexpr double repoint_chance = 0.01;

  explicit row_scanner(std::uint64_t seed) : rng_(seed) {}
  virtual ~row_scanner() = default;
  row_scanner(const row_scanner&) = delete;
  row_scanner& operator=(const row_scanner&) = delete;

  // Reads about `fetch` rows in batches of `batch_size`, each batch from its
  // own pointer.
  scan_result scan(std::uint32_t fetch, std::uint32_t batch_size);
  // The same into `out`, reusing its storage: a result handed back by the
  // engine's owner after applying it saves allocating (and faulting in) the
  // next one. Throws store_error naming the source.
  void scan_into(std::uint32_t fetch, std::uint32_t batch_size, scan_result& out);

  // About `wanted` rows spread over the whole table (or this shard) whatever
  // the order of the ids: every row has the same chance and neighbours are
  // independent. The scan's runs of consecutive ids are not: where ids follow
  // signup time and veterans are stronger, a few runs misjudge the MMR
  // distribution. This reads the whole table once (linear in its size), so it
  // sizes a cold start, not every tick. The rows come in random order.
  virtual scan_result sample(std::uint32_t wanted, std::uint64_t seed) = 0;

  // The last id read by each batch's pointer.
  const std::vector<std::int64_t>& pointers() const { return pointers_; }

 protected:
  // The smallest and largest id of the source (not only this shard's), or
  // nothing when it is empty.
  virtual std::optional<std::pair<std::int64_t, std::int64_t>> id_range() = 0;
  // Appends up to `limit` of this shard's rows with ids above `after`, in id
  // order; `last_id` becomes the last id read, usable or not.
  virtual void read_after(std::int64_t after, std::uint32_t limit, scan_result& out,
                          std::int64_t& last_id) = 0;
  // Every batch's read_after at once: for batch b, up to wants[b] rows after
  // pointers[b], appended in batch order; pointers[b] becomes the last id
  // read and got[b] how many rows (usable or not) it read. By default one
  // read_after per batch; a database that pays a round trip per statement
  // reads them all in one.
  virtual void read_batches(std::span<std::int64_t> pointers,
                            const std::vector<std::uint32_t>& wants, scan_result& out,
                            std::vector<std::uint32_t>& got);
  // The same for ids up to `upto`, from the start: the rest of a batch that
  // reached the end.
  virtual void read_up_to(std::int64_t upto, std::uint32_t limit, scan_result& out,
                          std::int64_t& last_id) = 0;
  // "scan of 'players' in '<file or URL>'", for errors.
  virtual std::string describe() const = 0;

  // Counts an unreadable row and keeps its explanation while there are few.
  static void unreadable(scan_result& out, std::string why);
  // Shuffles a sample, so that a consumer keeping only the latest rows does
  // not keep only the highest ids.
  static void shuffle(std::vector<player_row>& rows, std::uint64_t seed);

 private:
  rng rng_;
  std::vector<std::int64_t> pointers_;  // last id read by each batch's pointer
  std::vector<std::int64_t> began_;     // where each batch of this scan began
  std::vector<std::uint32_t> wants_, got_;
};

// A table or view name usable in SQL: letters, digits and '_', not starting with
// a digit. Anything else is refused, so the name can be quoted into SQL.
bool valid_sql_identifier(const std::string& name);

}  // namespace mm
