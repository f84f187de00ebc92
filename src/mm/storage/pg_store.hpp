// The player store on PostgreSQL (mm/storage/player_store.hpp): the player
// table and the snapshots that several matchmakerd nodes share. The same rows,
// batches and scan as on SQLite; where PostgreSQL differs:
// - a batch of upserts is one multi-row INSERT ... ON CONFLICT per 1,000 rows
//   (a round trip each, not one per row); a player twice in a batch is written
//   once, with its last row, as SQLite's one-by-one upserts leave it;
// - a sharded scan reads through an index on (id % shards, id), created when
//   the first scanner of that many shards opens, so that an instance's scan
//   reads only its own rows;
// - the cold-start sample hashes ids with PostgreSQL's hashint8extended: every
//   row has the same chance, as on SQLite, but not the same rows are drawn.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "mm/engine/error.hpp"
#include "mm/storage/pg_database.hpp"
#include "mm/storage/player_store.hpp"

namespace mm {

class pg_store final : public player_store {
 public:
  // Connects and migrates (pg_database); each call gives up after
  // `io_timeout`, on both sides. Throws store_error.
  explicit pg_store(const std::string& url,
                    std::chrono::milliseconds io_timeout = pg_database::default_io_timeout);

  pg_database& db() { return db_; }

  const std::string& where() const override { return db_.where(); }
  write_report upsert_players(std::span<const player_row> rows) override;
  std::uint64_t delete_players(std::span<const player_id> ids) override;
  std::optional<player_row> find_player(player_id id) override;
  std::uint64_t count_players() override;
  std::vector<player_row> players_after(player_id after, std::size_t limit) override;
  void write_state(const std::string& instance_id, const stored_state& s) override;
  std::optional<stored_state> read_state(const std::string& instance_id) override;
  void set_aside_state(const std::string& instance_id, const std::string& reason,
                       std::int64_t now_unix_ms) override;
  std::vector<rejected_state> rejected_states(const std::string& instance_id) override;
  void write_session_state(const std::string& service, const session_state_rows& s,
                           std::int64_t now_unix_ms) override;
  session_state_rows take_session_state(const std::string& service) override;
  // The ticket journal (pg_ticket_journal.cpp).
  std::uint64_t write_journal(const std::string& service, const journal_batch& b,
                              std::vector<std::uint32_t>* lost_groups = nullptr) override;
  journal_contents read_journal(const std::string& service, const journal_read& r) override;
  std::vector<journal_event> read_stream_events(const std::string& stream, std::uint64_t after,
                                                std::size_t max) override;
  std::vector<journal_ticket> read_waiting_tickets(const std::string& service) override;
  std::vector<journal_ticket> read_guest_tickets(const std::string& service) override;
  std::vector<journal_ticket> read_waiting_rows(const std::vector<std::uint64_t>& serials) override;
  std::vector<journal_backfill> read_backfills(const std::string& service) override;
  void prune_journal(const std::string& service, const journal_prune& p) override;
  std::vector<journal_v8_row> read_v8_journal(const std::string& service) override;
  void drop_v8_journal(const std::string& service) override;
  std::vector<std::uint64_t> claim_players(const std::string& service,
                                           const std::vector<player_claim>& claims) override;
  std::size_t drop_orphan_claims(const std::string& service) override;
  std::string claim_match(const std::string& stream, const std::string& match_id,
                          const std::string& service) override;
  std::optional<std::string> match_holder(const std::string& stream,
                                          const std::string& match_id) override;
  void release_match(const std::string& stream, const std::string& match_id,
                     const std::string& service) override;
  std::size_t drop_orphan_match_claims(const std::string& service) override;
  std::uint64_t reserve_id_generation() override;
  id_key_words ticket_id_key(const id_key_words& fresh) override;
  // The configuration's versions (pg_config_versions.cpp).
  std::optional<config_version> latest_config(const std::string& scope) override;
  std::vector<config_version> config_history(const std::string& scope, std::size_t limit) override;
  bool append_config(const config_version& v) override;
  // PostgreSQL checks its own pages (and reports damage on read): nothing to
  // do at start.
  std::optional<std::string> integrity_problem() override { return std::nullopt; }
  void set_write_fence(const write_fence& f) override;
  std::unique_ptr<row_scanner> open_scanner(const scan_options& o) override;

  // Rows per INSERT statement of a batch.
  static constexpr std::size_t rows_per_statement = 1000;

 private:
  template <class F>
  auto guarded(const char* what, F&& f) -> decltype(f());

  // One round of write_journal (pg_ticket_journal.cpp): the batch with a
  // guard over its `contested` rows.
  std::uint64_t write_batch(const std::string& service, const journal_batch& b,
                            const std::vector<std::uint64_t>& contested);

  // In a fenced write's transaction, before anything is written: throws
  // mm::error(errc::fenced) unless the fence's lease is still this node's at
  // its epoch and the node alive. The lease row stays locked (FOR SHARE) to
  // the commit, so a take of the lease waits for the write, and every write
  // that commits is read by the next owner.
  void check_fence(pg::transaction& tx) const;
  error fenced_error() const;
  // The same check as the first statement of a pipeline: it fails the
  // pipeline (and so its transaction) when the fence no longer holds.
  pg::statement fence_statement() const;
  // `statements` after the fence's check, in one round trip and one
  // transaction (pg::connection::exec_pipeline); errc::fenced when refused.
  // The results of `statements`, in their order.
  std::vector<pg::result> fenced_pipeline(std::vector<pg::statement>& statements);

  std::string url_;  // with its password: scanners open their own connections
  std::chrono::milliseconds io_timeout_;
  pg_database db_;
  write_fence fence_;
};

// The scan on PostgreSQL: row_scanner's pointers and batches, read with
// prepared statements on a connection of its own.
class pg_scanner final : public row_scanner {
 public:
  pg_scanner(const std::string& url, const scan_options& o,
             std::chrono::milliseconds io_timeout = pg_database::default_io_timeout);

  scan_result sample(std::uint32_t wanted, std::uint64_t seed) override;

  // Run on the scanner's connection. The scan reads short runs from random
  // points of a table that is mostly cached (or on SSD): with PostgreSQL's
  // default random_page_cost of 4 the planner reads a shard through the
  // primary key and drops the other shards' rows, (N - 1) / N of what it
  // reads, rather than through the shard index (docs/performance.md).
  // A setting of the connection, so a reconnected connection keeps it.
  static constexpr const char* scan_random_page_cost = "1.1";

  // The index a scan of `shards` shards of `table` reads through.
  static std::string shard_index_name(const std::string& table, std::uint32_t shards);

 private:
  std::optional<std::pair<std::int64_t, std::int64_t>> id_range() override;
  void read_after(std::int64_t after, std::uint32_t limit, scan_result& out,
                  std::int64_t& last_id) override;
  // One statement for every batch: a LATERAL join of the pointers with the
  // table, one index range per pointer, so a scan costs one round trip.
  void read_batches(std::span<std::int64_t> pointers, const std::vector<std::uint32_t>& wants,
                    scan_result& out, std::vector<std::uint32_t>& got) override;
  void read_up_to(std::int64_t upto, std::uint32_t limit, scan_result& out,
                  std::int64_t& last_id) override;
  std::string describe() const override;
  void ensure_shard_index(std::uint32_t shards);
  void read(const pg::result& rows, scan_result& out, std::int64_t& last_id);
  // Row `row` of `q`, whose scan columns start at column `first`.
  void read_row(const pg::result& q, std::size_t row, int first, scan_result& out,
                std::int64_t& last_id);

  pg_database db_;
  std::string source_;
  std::string shard_filter_;  // " AND id % N = k", or empty
};

}  // namespace mm
