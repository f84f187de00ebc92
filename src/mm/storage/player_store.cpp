#include "mm/storage/player_store.hpp"

#include "mm/storage/player_scanner.hpp"

namespace mm {

namespace {
// The value of every "password=" (a URL's query parameter, or a key of a
// libpq "key=value" string) replaced by "***".
std::string redact_password_parameters(std::string s) {
  static constexpr std::string_view key = "password=";
  for (auto at = s.find(key); at != std::string::npos; at = s.find(key, at + 1)) {
    const auto from = at + key.size();
    auto to = s.find_first_of("& ", from);
    if (to == std::string::npos) to = s.size();
    s.replace(from, to - from, "***");
  }
  return s;
}
}  // namespace

std::string redacted_url(const std::string& url) {
  // scheme://user:password@host...: the password is what lies between the
  // first ':' after the scheme and the last '@' before the path.
  const auto scheme = url.find("://");
  if (scheme == std::string::npos) return redact_password_parameters(url);
  const auto start = scheme + 3;
  const auto path = url.find('/', start);
  const auto at = url.rfind('@', path == std::string::npos ? std::string::npos : path);
  const auto colon = url.find(':', start);
  if (at == std::string::npos || at < start || colon == std::string::npos || colon > at)
    return redact_password_parameters(url);
  return redact_password_parameters(url.substr(0, colon + 1) + "***" + url.substr(at));
}

sqlite_store::sqlite_store(const std::string& path, database_options o)
    : db_(path, o), busy_timeout_ms_(o.busy_timeout_ms) {}

write_report sqlite_store::upsert_players(std::span<const player_row> rows) {
  return mm::upsert_players(db_, rows);
}
std::uint64_t sqlite_store::delete_players(std::span<const player_id> ids) {
  return mm::delete_players(db_, ids);
}
std::optional<player_row> sqlite_store::find_player(player_id id) {
  return mm::find_player(db_, id);
}
std::uint64_t sqlite_store::count_players() {
  return mm::count_players(db_);
}
std::vector<player_row> sqlite_store::players_after(player_id after, std::size_t limit) {
  return mm::players_after(db_, after, limit);
}
void sqlite_store::write_session_state(const std::string& service, const session_state_rows& s,
                                       std::int64_t now_unix_ms) {
  mm::write_session_state(db_, service, s, now_unix_ms);
}
session_state_rows sqlite_store::take_session_state(const std::string& service) {
  return mm::take_session_state(db_, service);
}

std::optional<config_version> sqlite_store::latest_config(const std::string& scope) {
  return latest_config_version(db_, scope);
}

std::vector<config_version> sqlite_store::config_history(const std::string& scope,
                                                         std::size_t limit) {
  return config_versions(db_, scope, limit);
}

bool sqlite_store::append_config(const config_version& v) {
  return append_config_version(db_, v);
}

std::uint64_t sqlite_store::write_journal(const std::string& service, const journal_batch& b,
                                          std::vector<std::uint32_t>* lost_groups) {
  return mm::write_journal(db_, service, b, lost_groups);
}

journal_contents sqlite_store::read_journal(const std::string& service, const journal_read& r) {
  return mm::read_journal(db_, service, r);
}

std::vector<journal_event> sqlite_store::read_stream_events(const std::string& stream,
                                                            std::uint64_t after, std::size_t max) {
  return mm::read_stream_events(db_, stream, after, max);
}

std::vector<journal_ticket> sqlite_store::read_waiting_tickets(const std::string& service) {
  return mm::read_waiting_tickets(db_, service);
}

std::vector<journal_ticket> sqlite_store::read_guest_tickets(const std::string& service) {
  return mm::read_guest_tickets(db_, service);
}

std::vector<journal_ticket> sqlite_store::read_waiting_rows(
    const std::vector<std::uint64_t>& serials) {
  return mm::read_waiting_rows(db_, serials);
}

std::vector<journal_backfill> sqlite_store::read_backfills(const std::string& service) {
  return mm::read_backfills(db_, service);
}

void sqlite_store::prune_journal(const std::string& service, const journal_prune& p) {
  mm::prune_journal(db_, service, p);
}

std::vector<journal_v8_row> sqlite_store::read_v8_journal(const std::string& service) {
  return mm::read_v8_journal(db_, service);
}

void sqlite_store::drop_v8_journal(const std::string& service) {
  mm::drop_v8_journal(db_, service);
}

std::vector<std::uint64_t> sqlite_store::claim_players(const std::string& service,
                                                       const std::vector<player_claim>& claims) {
  return mm::claim_players(db_, service, claims);
}

std::size_t sqlite_store::drop_orphan_claims(const std::string& service) {
  return mm::drop_orphan_claims(db_, service);
}

std::string sqlite_store::claim_match(const std::string& stream, const std::string& match_id,
                                      const std::string& service) {
  return mm::claim_match(db_, stream, match_id, service);
}

std::optional<std::string> sqlite_store::match_holder(const std::string& stream,
                                                      const std::string& match_id) {
  return mm::match_holder(db_, stream, match_id);
}

void sqlite_store::release_match(const std::string& stream, const std::string& match_id,
                                 const std::string& service) {
  mm::release_match(db_, stream, match_id, service);
}

std::size_t sqlite_store::drop_orphan_match_claims(const std::string& service) {
  return mm::drop_orphan_match_claims(db_, service);
}

std::uint64_t sqlite_store::reserve_id_generation() {
  return mm::reserve_id_generation(db_);
}

id_key_words sqlite_store::ticket_id_key(const id_key_words& fresh) {
  return mm::ticket_id_key(db_, fresh);
}

void sqlite_store::write_state(const std::string& instance_id, const stored_state& s) {
  mm::write_state(db_, instance_id, s);
}
std::optional<stored_state> sqlite_store::read_state(const std::string& instance_id) {
  return mm::read_state(db_, instance_id);
}
void sqlite_store::set_aside_state(const std::string& instance_id, const std::string& reason,
                                   std::int64_t now_unix_ms) {
  mm::set_aside_state(db_, instance_id, reason, now_unix_ms);
}
std::vector<rejected_state> sqlite_store::rejected_states(const std::string& instance_id) {
  return mm::rejected_states(db_, instance_id);
}
std::optional<std::string> sqlite_store::integrity_problem() {
  return db_.integrity_problem();
}
void sqlite_store::set_write_fence(const write_fence& f) {
  if (!f.empty())
    throw error(errc::invalid_argument,
                "a SQLite database has one server: leases and fenced writes need PostgreSQL");
}
std::unique_ptr<row_scanner> sqlite_store::open_scanner(const scan_options& o) {
  return std::make_unique<player_scanner>(db_.path(), o.source, o.seed, busy_timeout_ms_,
                                          o.shard_count, o.shard_index);
}

}  // namespace mm
