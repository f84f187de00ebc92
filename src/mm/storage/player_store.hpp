// The player store: what a matchmaker needs from the database that holds the
// player table and the snapshots, whichever database that is. SQLite
// (sqlite_store, embedded, the default) and PostgreSQL (pg_store, shared by
// several nodes, mm/storage/pg_store.hpp) implement it with the same meaning:
// the same batches, the same scan, the same snapshot rows.
//
// A store is one connection, used by one thread at a time. The scan gets its
// own connection (open_scanner), so it can run beside the writer.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "mm/engine/player_row.hpp"
#include "mm/storage/config_versions.hpp"
#include "mm/storage/database.hpp"
#include "mm/storage/player_table.hpp"
#include "mm/storage/row_scanner.hpp"
#include "mm/storage/session_state_table.hpp"
#include "mm/storage/state_table.hpp"
#include "mm/storage/ticket_journal.hpp"

namespace mm {

// What a node of a cluster writes under (docs/design.md, "Leases"): the
// resource it holds a lease on, its node id and the lease's epoch. A store
// with a fence keeps a write only while that lease is still the node's at
// that epoch and the node alive; otherwise the write is refused, whole, with
// errc::fenced. Empty: writes are not fenced (one server alone).
struct write_fence {
  std::string resource;
  std::string node;
  std::uint64_t epoch = 0;
  // How long the database lets a transaction of this connection sit idle
  // before it ends the session: a writer paused in the middle of a
  // transaction (SIGSTOP, a cut network) must not hold the lease row's lock,
  // and with it the next owner's take, for longer.
  std::chrono::milliseconds idle_limit{1000};
  bool empty() const { return resource.empty(); }
};

class player_store {
 public:
  virtual ~player_store() = default;

  // The file, or the URL without its password: for messages and logs.
  virtual const std::string& where() const = 0;

  // The player table (mm/storage/player_table.hpp): one transaction per call;
  // bad rows reported and skipped, never failing the batch.
  virtual write_report upsert_players(std::span<const player_row> rows) = 0;
  virtual std::uint64_t delete_players(std::span<const player_id> ids) = 0;
  virtual std::optional<player_row> find_player(player_id id) = 0;
  virtual std::uint64_t count_players() = 0;
  virtual std::vector<player_row> players_after(player_id after, std::size_t limit) = 0;

  // The snapshots, one row per instance (mm/storage/state_table.hpp).
  virtual void write_state(const std::string& instance_id, const stored_state& s) = 0;
  virtual std::optional<stored_state> read_state(const std::string& instance_id) = 0;
  virtual void set_aside_state(const std::string& instance_id, const std::string& reason,
                               std::int64_t now_unix_ms) = 0;
  virtual std::vector<rejected_state> rejected_states(const std::string& instance_id) = 0;

  // The session matchmaker's state across a restart
  // (mm/storage/session_state_table.hpp).
  virtual void write_session_state(const std::string& service, const session_state_rows& s,
                                   std::int64_t now_unix_ms) = 0;
  virtual session_state_rows take_session_state(const std::string& service) = 0;

  // The session tickets' journal (mm/storage/ticket_journal.hpp).
  // The highest event number of the batch (0 without events); the groups
  // left out, when asked (ticket_journal.hpp).
  virtual std::uint64_t write_journal(const std::string& service, const journal_batch& b,
                                      std::vector<std::uint32_t>* lost_groups = nullptr) = 0;
  virtual journal_contents read_journal(const std::string& service, const journal_read& r) = 0;
  // The events of a stream after a number (ticket_journal.hpp).
  virtual std::vector<journal_event> read_stream_events(const std::string& stream,
                                                        std::uint64_t after, std::size_t max) = 0;
  virtual std::vector<journal_ticket> read_waiting_tickets(const std::string& service) = 0;
  virtual std::vector<journal_ticket> read_guest_tickets(const std::string& service) = 0;
  virtual std::vector<journal_ticket> read_waiting_rows(
      const std::vector<std::uint64_t>& serials) = 0;
  virtual std::vector<journal_backfill> read_backfills(const std::string& service) = 0;
  virtual void prune_journal(const std::string& service, const journal_prune& p) = 0;
  virtual std::vector<journal_v8_row> read_v8_journal(const std::string& service) = 0;
  virtual void drop_v8_journal(const std::string& service) = 0;
  virtual std::vector<std::uint64_t> claim_players(const std::string& service,
                                                   const std::vector<player_claim>& claims) = 0;
  virtual std::size_t drop_orphan_claims(const std::string& service) = 0;
  // Running match ids across partitions (ticket_journal.hpp, claim_match).
  virtual std::string claim_match(const std::string& stream, const std::string& match_id,
                                  const std::string& service) = 0;
  virtual std::optional<std::string> match_holder(const std::string& stream,
                                                  const std::string& match_id) = 0;
  virtual void release_match(const std::string& stream, const std::string& match_id,
                             const std::string& service) = 0;
  virtual std::size_t drop_orphan_match_claims(const std::string& service) = 0;
  virtual std::uint64_t reserve_id_generation() = 0;
  virtual id_key_words ticket_id_key(const id_key_words& fresh) = 0;

  // The configuration's versions (mm/storage/config_versions.hpp): never
  // fenced, any node of a cluster may add one.
  virtual std::optional<config_version> latest_config(const std::string& scope) = 0;
  virtual std::vector<config_version> config_history(const std::string& scope,
                                                     std::size_t limit) = 0;
  virtual bool append_config(const config_version& v) = 0;

  // A damaged store, found by a check at start, or nothing when it is sound.
  virtual std::optional<std::string> integrity_problem() = 0;

  // From now on, the snapshot, session state and journal writes of this
  // store (this connection) are fenced. Only PostgreSQL has leases: SQLite
  // refuses a fence with errc::invalid_argument.
  virtual void set_write_fence(const write_fence& f) = 0;

  // A scanner on a connection of its own. Throws store_error when the source
  // cannot be read.
  virtual std::unique_ptr<row_scanner> open_scanner(const scan_options& o) = 0;
};

// `url` with any password replaced by "***", for messages and logs.
std::string redacted_url(const std::string& url);

// Opens a store from where it is: a file path or a URL. A server picks the
// databases it was built with (apps/server/store_url.hpp).
using store_opener = std::function<std::unique_ptr<player_store>(const std::string& where)>;

// The SQLite store over a database file, created and migrated when new.
class sqlite_store final : public player_store {
 public:
  explicit sqlite_store(const std::string& path, database_options o = {});

  database& db() { return db_; }

  const std::string& where() const override { return db_.path(); }
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
  std::optional<config_version> latest_config(const std::string& scope) override;
  std::vector<config_version> config_history(const std::string& scope, std::size_t limit) override;
  bool append_config(const config_version& v) override;
  std::optional<std::string> integrity_problem() override;
  void set_write_fence(const write_fence& f) override;
  std::unique_ptr<row_scanner> open_scanner(const scan_options& o) override;

 private:
  database db_;
  int busy_timeout_ms_;
};

}  // namespace mm
