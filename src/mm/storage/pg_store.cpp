#include "mm/storage/pg_store.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <unordered_map>

#include "mm/engine/log.hpp"

namespace mm {

namespace {

constexpr const char* row_columns =
    "SELECT id, mmr, attr0, attr1, attr2, attr3, payload, is_bot, updated_at FROM players ";

// One key for "a matchmaker creates a shard index" (an arbitrary constant:
// "mm shard" in ASCII), held for the creating transaction only.
constexpr long long shard_index_lock = 0x6d6d207368617264LL;

// A field's whole text as a number (int64 or double); false for NULL or
// anything else, without an exception.
template <class Number>
bool parse(const pg::result& r, std::size_t row, int column, Number& v) {
  if (r.is_null(row, column)) return false;
  const std::string_view s = r.view(row, column);
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc{} && p == s.data() + s.size();
}

player_row read_row(const pg::result& r, std::size_t row) {
  player_row p;
  std::int64_t v = 0;
  parse(r, row, 0, v);
  p.id = static_cast<player_id>(v);
  parse(r, row, 1, p.mmr);
  for (int a = 0; a < 4; ++a) {
    v = 0;
    parse(r, row, 2 + a, v);
    p.attributes[a] = v;
  }
  p.payload = r.bytes(row, 6);
  v = 0;
  parse(r, row, 7, v);
  p.is_bot = v != 0;
  v = 0;
  parse(r, row, 8, v);
  p.updated_at_unix_ms = v;
  return p;
}

std::string text(std::int64_t v) {
  char buf[24];
  return std::string(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
}

// An array literal of ids for = ANY($1::bigint[]).
std::string id_array(std::span<const player_id> ids) {
  std::string out = "{";
  for (player_id id : ids) {
    if (id == invalid_player || id > max_stored_player_id) continue;
    if (out.size() > 1) out.push_back(',');
    out += text(static_cast<std::int64_t>(id));
  }
  out.push_back('}');
  return out;
}

// INSERT ... VALUES ($1..$9), ($10..$18), ... for `rows` rows.
std::string upsert_statement(std::size_t rows) {
  std::string sql =
      "INSERT INTO players (id, mmr, attr0, attr1, attr2, attr3, payload, is_bot, updated_at) "
      "VALUES ";
  int n = 0;
  for (std::size_t r = 0; r < rows; ++r) {
    sql += r ? ",(" : "(";
    for (int c = 0; c < 9; ++c) {
      sql += c ? ",$" : "$";
      sql += std::to_string(++n);
    }
    sql += ")";
  }
  return sql +
         " ON CONFLICT (id) DO UPDATE SET mmr = excluded.mmr, attr0 = excluded.attr0, "
         "attr1 = excluded.attr1, attr2 = excluded.attr2, attr3 = excluded.attr3, "
         "payload = excluded.payload, is_bot = excluded.is_bot, updated_at = excluded.updated_at";
}

}  // namespace

template <class F>
auto pg_store::guarded(const char* what, F&& f) -> decltype(f()) {
  return pg_guarded(db_, what, std::forward<F>(f));
}

pg_store::pg_store(const std::string& url, std::chrono::milliseconds io_timeout)
    : url_(url), io_timeout_(io_timeout), db_(url, io_timeout) {}

void pg_store::set_write_fence(const write_fence& f) {
  fence_ = f;
  if (f.empty()) return;
  // A setting of the connection: kept across its reconnection (a paused
  // writer's is ended by this very limit), where a SET would be lost.
  guarded("limit idle transactions", [&] {
    db_.sql().set("idle_in_transaction_session_timeout",
                  std::to_string(std::max<std::int64_t>(1, f.idle_limit.count())));
  });
}

namespace {
constexpr const char* fence_rows =
    "SELECT 1 FROM cluster_leases l JOIN cluster_nodes n ON n.node_id = l.owner "
    "WHERE l.resource = $1 AND l.owner = $2 AND l.epoch = $3 AND n.alive FOR SHARE OF l";
}  // namespace

error pg_store::fenced_error() const {
  return error(errc::fenced, "node '" + fence_.node + "' no longer holds the lease on '" +
                                 fence_.resource + "' at epoch " + std::to_string(fence_.epoch) +
                                 ": the write is refused");
}

void pg_store::check_fence(pg::transaction& tx) const {
  if (fence_.empty()) return;
  if (tx.exec_params(fence_rows, fence_.resource, fence_.node,
                     static_cast<std::int64_t>(fence_.epoch))
          .empty())
    throw fenced_error();
}

pg::statement pg_store::fence_statement() const {
  // One row locked, or a division by zero (SQLSTATE 22012) that aborts the
  // pipeline: fenced_pipeline tells it from other failures by its place.
  return {std::string("WITH f AS (") + fence_rows + ") SELECT 1 / count(*) FROM f",
          {fence_.resource, fence_.node, pg::to_param(static_cast<std::int64_t>(fence_.epoch))}};
}

std::vector<pg::result> pg_store::fenced_pipeline(std::vector<pg::statement>& statements) {
  // An empty write still asks the fence: a writer learns it was fenced out.
  if (statements.empty() && fence_.empty()) return {};
  if (!fence_.empty()) statements.insert(statements.begin(), fence_statement());
  try {
    auto results = db_.sql().exec_pipeline(statements);
    if (!fence_.empty()) results.erase(results.begin());
    return results;
  } catch (const pg::failure& e) {
    if (!fence_.empty() && e.statement == 0 && e.state == "22012") throw fenced_error();
    throw;
  }
}

write_report pg_store::upsert_players(std::span<const player_row> rows) {
  write_report report;
  const std::int64_t now = unix_ms_now();
  // The rows to send: valid ones, and of a player given twice only the last
  // (one INSERT ... ON CONFLICT cannot touch a row twice).
  std::vector<std::size_t> send;
  send.reserve(rows.size());
  std::unordered_map<player_id, std::size_t> slot;  // player -> position in `send`
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (auto problem = row_problem_of(rows[i])) {
      report.rejected.push_back({i, rows[i].id, *problem});
      continue;
    }
    ++report.written;
    const auto [it, fresh] = slot.try_emplace(rows[i].id, send.size());
    if (fresh)
      send.push_back(i);
    else
      send[it->second] = i;
  }
  if (send.empty()) return report;
  guarded("write players", [&] {
    // A call's time for each statement of the batch.
    const auto statements = (send.size() + rows_per_statement - 1) / rows_per_statement;
    pg::transaction tx(db_.sql(), db_.sql().call_timeout() * static_cast<std::int64_t>(statements));
    std::vector<pg::param> values;
    for (std::size_t from = 0; from < send.size(); from += rows_per_statement) {
      const std::size_t n = std::min(rows_per_statement, send.size() - from);
      values.clear();
      values.reserve(n * 9);
      for (std::size_t k = 0; k < n; ++k) {
        const player_row& r = rows[send[from + k]];
        values.push_back(text(static_cast<std::int64_t>(r.id)));
        values.push_back(pg::to_param(r.mmr));
        for (int a = 0; a < 4; ++a) values.push_back(text(r.attributes[a]));
        // An empty payload is NULL, as on SQLite.
        values.push_back(r.payload.empty() ? pg::param(std::nullopt) : pg::param::bytes(r.payload));
        values.push_back(r.is_bot ? "1" : "0");
        values.push_back(text(r.updated_at_unix_ms ? r.updated_at_unix_ms : now));
      }
      tx.exec(upsert_statement(n), values);
    }
    tx.commit();
  });
  return report;
}

std::uint64_t pg_store::delete_players(std::span<const player_id> ids) {
  return guarded("delete players", [&] {
    const auto r =
        db_.sql().exec_params("DELETE FROM players WHERE id = ANY($1::bigint[])", id_array(ids));
    return static_cast<std::uint64_t>(r.affected_rows());
  });
}

std::optional<player_row> pg_store::find_player(player_id id) {
  if (id == invalid_player || id > max_stored_player_id) return std::nullopt;
  return guarded("read a player", [&]() -> std::optional<player_row> {
    const auto r = db_.sql().exec_params(std::string(row_columns) + "WHERE id = $1",
                                         static_cast<std::int64_t>(id));
    if (r.empty()) return std::nullopt;
    return read_row(r, 0);
  });
}

std::vector<player_row> pg_store::players_after(player_id after, std::size_t limit) {
  std::vector<player_row> out;
  if (after >= max_stored_player_id) return out;
  guarded("read players", [&] {
    const auto r =
        db_.sql().exec_params(std::string(row_columns) + "WHERE id > $1 ORDER BY id LIMIT $2",
                              static_cast<std::int64_t>(after), static_cast<std::int64_t>(limit));
    for (std::size_t i = 0; i < r.size(); ++i) out.push_back(read_row(r, i));
  });
  return out;
}

std::uint64_t pg_store::count_players() {
  return guarded("count players", [&] {
    return static_cast<std::uint64_t>(db_.sql().exec("SELECT count(*) FROM players").int64(0, 0));
  });
}

void pg_store::write_session_state(const std::string& service, const session_state_rows& s,
                                   std::int64_t now_unix_ms) {
  guarded("write the session state", [&] {
    pg::transaction tx(db_.sql());
    check_fence(tx);
    tx.exec_params("DELETE FROM session_tickets WHERE service = $1", service);
    tx.exec_params("DELETE FROM session_lobbies WHERE service = $1", service);
    for (const auto& x : s.tickets)
      tx.exec_params(
          "INSERT INTO session_tickets (service, ticket_id, queue, created_at, ticket, "
          "written_at) VALUES ($1, $2, $3, $4, $5, $6)",
          service, static_cast<std::int64_t>(x.id), x.queue, x.created_unix_ms, x.ticket,
          now_unix_ms);
    for (const auto& x : s.lobbies)
      tx.exec_params(
          "INSERT INTO session_lobbies (service, lobby_id, mode, datacenter, max_players, "
          "players, created_by_find, written_at, owner) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, "
          "$9)",
          service, x.id, x.mode, x.datacenter, static_cast<std::int64_t>(x.max_players),
          static_cast<std::int64_t>(x.players), x.created_by_find ? 1 : 0, now_unix_ms, x.owner);
    tx.commit();
  });
}

session_state_rows pg_store::take_session_state(const std::string& service) {
  return guarded("take the session state", [&] {
    session_state_rows out;
    pg::transaction tx(db_.sql());
    const auto t = tx.exec_params(
        "DELETE FROM session_tickets WHERE service = $1 "
        "RETURNING ticket_id, queue, created_at, ticket",
        service);
    for (std::size_t i = 0; i < t.size(); ++i)
      out.tickets.push_back(
          {static_cast<std::uint64_t>(t.int64(i, 0)), t.text(i, 1), t.int64(i, 2), t.text(i, 3)});
    const auto l = tx.exec_params(
        "DELETE FROM session_lobbies WHERE service = $1 "
        "RETURNING lobby_id, mode, datacenter, max_players, players, created_by_find, owner",
        service);
    for (std::size_t i = 0; i < l.size(); ++i)
      out.lobbies.push_back(
          {l.text(i, 0), l.text(i, 1), l.text(i, 2), static_cast<std::uint32_t>(l.int64(i, 3)),
           static_cast<std::uint32_t>(l.int64(i, 4)), l.int64(i, 5) != 0, l.text(i, 6)});
    tx.commit();
    std::sort(out.tickets.begin(), out.tickets.end(),
              [](const auto& a, const auto& b) { return a.id < b.id; });
    std::sort(out.lobbies.begin(), out.lobbies.end(),
              [](const auto& a, const auto& b) { return a.id < b.id; });
    return out;
  });
}

void pg_store::write_state(const std::string& instance_id, const stored_state& s) {
  guarded("write the matchmaker state", [&] {
    pg::transaction tx(db_.sql());
    check_fence(tx);
    tx.exec_params(
        "INSERT INTO matchmaker_state (instance_id, persisted_at, payload_version, payload, "
        "lease_epoch) VALUES ($1, $2, $3, $4, NULLIF($5, 0)) ON CONFLICT (instance_id) DO UPDATE "
        "SET persisted_at = excluded.persisted_at, payload_version = excluded.payload_version, "
        "payload = excluded.payload, lease_epoch = excluded.lease_epoch",
        instance_id, s.persisted_at_unix_ms, static_cast<std::int64_t>(s.payload_version),
        pg::param::bytes(s.payload), static_cast<std::int64_t>(fence_.empty() ? 0 : fence_.epoch));
    tx.commit();
  });
}

std::optional<stored_state> pg_store::read_state(const std::string& instance_id) {
  return guarded("read the matchmaker state", [&]() -> std::optional<stored_state> {
    const auto r = db_.sql().exec_params(
        "SELECT persisted_at, payload_version, payload FROM matchmaker_state "
        "WHERE instance_id = $1",
        instance_id);
    if (r.empty()) return std::nullopt;
    stored_state s;
    s.persisted_at_unix_ms = r.int64(0, 0);
    s.payload_version = static_cast<std::uint32_t>(r.int64(0, 1));
    s.payload = r.bytes(0, 2);
    return s;
  });
}

void pg_store::set_aside_state(const std::string& instance_id, const std::string& reason,
                               std::int64_t now_unix_ms) {
  guarded("set the matchmaker state aside", [&] {
    pg::transaction tx(db_.sql());
    check_fence(tx);
    tx.exec_params(
        "INSERT INTO matchmaker_state_rejected (instance_id, set_aside_at, reason, "
        "persisted_at, payload) SELECT instance_id, $1, $2, persisted_at, payload "
        "FROM matchmaker_state WHERE instance_id = $3",
        now_unix_ms, reason, instance_id);
    tx.exec_params("DELETE FROM matchmaker_state WHERE instance_id = $1", instance_id);
    tx.commit();
  });
}

std::vector<rejected_state> pg_store::rejected_states(const std::string& instance_id) {
  return guarded("read rejected states", [&] {
    std::vector<rejected_state> out;
    const auto r = db_.sql().exec_params(
        "SELECT set_aside_at, reason, COALESCE(persisted_at, 0), payload FROM "
        "matchmaker_state_rejected WHERE instance_id = $1 ORDER BY id",
        instance_id);
    for (std::size_t i = 0; i < r.size(); ++i)
      out.push_back({r.int64(i, 0), r.text(i, 1), r.int64(i, 2), r.bytes(i, 3)});
    return out;
  });
}

std::unique_ptr<row_scanner> pg_store::open_scanner(const scan_options& o) {
  return std::make_unique<pg_scanner>(url_, o, io_timeout_);
}

// --- the scan ---------------------------------------------------------------

namespace {
constexpr const char* scan_columns = "id, mmr, attr0, attr1, attr2, attr3, payload, is_bot";
constexpr const char* column_names[] = {"id",    "mmr",   "attr0",   "attr1",
                                        "attr2", "attr3", "payload", "is_bot"};
}  // namespace

pg_scanner::pg_scanner(const std::string& url, const scan_options& o,
                       std::chrono::milliseconds io_timeout)
    : row_scanner(o.seed), db_(url, io_timeout), source_(o.source) {
  if (!valid_sql_identifier(source_))
    throw store_error("scan source '" + source_ +
                      "' is not a plain table or view name (letters, digits, '_')");
  if (o.shard_count > 1)
    shard_filter_ = " AND id % " + std::to_string(o.shard_count) + " = " +
                    std::to_string(o.shard_index % o.shard_count);
  const std::string from = " FROM \"" + source_ + "\"";
  try {
    db_.sql().exec(std::string("SELECT ") + scan_columns + from + " LIMIT 0");
  } catch (const std::exception& e) {
    throw store_error(
        "scan source '" + source_ + "' in PostgreSQL database '" + db_.where() +
        "' cannot be read: " + e.what() +
        " (it needs the columns id, mmr, attr0, attr1, attr2, attr3, payload, is_bot)");
  }
  if (o.shard_count > 1) ensure_shard_index(o.shard_count);
  try {
    db_.sql().set("random_page_cost", scan_random_page_cost);
  } catch (const std::exception& e) {
    throw store_error(describe() + ": cannot set up its connection: " + e.what());
  }
  const std::string select = std::string("SELECT ") + scan_columns + from + " WHERE ";
  try {
    db_.sql().prepare("mm_scan_range", "SELECT MIN(id), MAX(id)" + from);
    db_.sql().prepare("mm_scan_after",
                      select + "id > $1" + shard_filter_ + " ORDER BY id LIMIT $2");
    db_.sql().prepare("mm_scan_up_to",
                      select + "id <= $1" + shard_filter_ + " ORDER BY id LIMIT $2");
    db_.sql().prepare(
        "mm_scan_batches",
        std::string("SELECT p.b, x.* FROM unnest($1::bigint[], $2::bigint[]) WITH ORDINALITY "
                    "AS p(after, want, b) CROSS JOIN LATERAL (") +
            select + "id > p.after" + shard_filter_ +
            " ORDER BY id LIMIT p.want) x ORDER BY p.b, x.id");
  } catch (const std::exception& e) {
    throw store_error(describe() + " cannot be prepared: " + e.what());
  }
}

std::string pg_scanner::describe() const {
  return "scan of '" + source_ + "' in PostgreSQL database '" + db_.where() + "'";
}

std::string pg_scanner::shard_index_name(const std::string& table, std::uint32_t shards) {
  return table + "_id_mod_" + std::to_string(shards);
}

void pg_scanner::ensure_shard_index(std::uint32_t shards) {
  // Only a table can be indexed; a view's scan filters what the view reads.
  try {
    // Building the index of a large table takes minutes: its calls get ten
    // on both sides, where the scan's get the usual deadline.
    pg::longer_calls longer(db_.sql(), std::chrono::minutes(10));
    pg::transaction tx(db_.sql());
    tx.exec("SET LOCAL statement_timeout = '10min'");
    const auto kind = tx.exec_params("SELECT relkind FROM pg_class WHERE oid = to_regclass($1)",
                                     "\"" + source_ + "\"");
    if (kind.empty() || (kind.text(0, 0) != "r" && kind.text(0, 0) != "p")) return;
    // Every shard start comes here, a takeover's too: an index that exists
    // is not created again (CREATE INDEX IF NOT EXISTS would still wait for
    // the table's lock, and for a paused node's open write).
    const std::string index = shard_index_name(source_, shards);
    if (!tx.exec_params("SELECT to_regclass($1) IS NULL", "\"" + index + "\"").boolean(0, 0))
      return;
    // A creator that stops frees the lock after a minute; a wait for the
    // table longer than 10 s gives up (the scan works without the index).
    tx.exec("SET LOCAL idle_in_transaction_session_timeout = '60s'");
    tx.exec("SET LOCAL lock_timeout = '10s'");
    // Nodes that start together create it once.
    tx.exec_params("SELECT pg_advisory_xact_lock($1)", static_cast<std::int64_t>(shard_index_lock));
    const std::string n = std::to_string(shards);
    tx.exec("CREATE INDEX IF NOT EXISTS \"" + index + "\" ON \"" + source_ + "\" ((id % " + n +
            "), id)");
    tx.commit();
  } catch (const std::exception& e) {
    // The scan still works without it, reading the other shards' rows too.
    log(log_level::warning, "store",
        describe() + ": cannot create the index " + shard_index_name(source_, shards) +
            " that lets a shard's scan read only its rows: " + e.what());
  }
}

std::optional<std::pair<std::int64_t, std::int64_t>> pg_scanner::id_range() {
  const auto r = db_.sql().exec_prepared("mm_scan_range", {});
  std::int64_t lo = 0, hi = 0;
  if (r.empty() || !parse(r, 0, 0, lo) || !parse(r, 0, 1, hi)) return std::nullopt;
  return std::pair{lo, hi};
}

void pg_scanner::read_after(std::int64_t after, std::uint32_t limit, scan_result& out,
                            std::int64_t& last_id) {
  read(db_.sql().exec_prepared("mm_scan_after", {text(after), text(limit)}), out, last_id);
}

void pg_scanner::read_up_to(std::int64_t upto, std::uint32_t limit, scan_result& out,
                            std::int64_t& last_id) {
  read(db_.sql().exec_prepared("mm_scan_up_to", {text(upto), text(limit)}), out, last_id);
}

void pg_scanner::read(const pg::result& rows, scan_result& out, std::int64_t& last_id) {
  for (std::size_t i = 0; i < rows.size(); ++i) read_row(rows, i, 0, out, last_id);
}

void pg_scanner::read_row(const pg::result& q, std::size_t row, int first, scan_result& out,
                          std::int64_t& last_id) {
  auto shown = [&](int c) {
    return q.is_null(row, first + c) ? std::string("NULL") : "'" + q.text(row, first + c) + "'";
  };
  auto number = [&](int c, auto& v) { return parse(q, row, first + c, v); };
  std::int64_t id = 0;
  if (!number(0, id)) {
    unreadable(out, "row after id " + std::to_string(last_id) + ": id is " + shown(0));
    return;
  }
  last_id = id;
  player_row r;
  std::int64_t attr = 0;
  int bad = id <= 0 ? 0 : -1;  // the first unusable column
  if (bad < 0 && !number(1, r.mmr)) bad = 1;
  for (int a = 0; a < 4 && bad < 0; ++a) {
    if (!number(2 + a, attr)) bad = 2 + a;
    r.attributes[a] = attr;
  }
  std::int64_t bot = 0;
  if (bad < 0 && !q.is_null(row, first + 7) && !number(7, bot)) bad = 7;
  if (bad >= 0) {
    unreadable(out, "player " + std::to_string(id) + ": " +
                        (bad == 0 ? std::string("id must be positive")
                                  : std::string(column_names[bad]) + " is " + shown(bad)));
    return;
  }
  r.id = static_cast<player_id>(id);
  r.payload = q.bytes(row, first + 6);
  r.is_bot = bot != 0;
  out.rows.push_back(std::move(r));
}

void pg_scanner::read_batches(std::span<std::int64_t> pointers,
                              const std::vector<std::uint32_t>& wants, scan_result& out,
                              std::vector<std::uint32_t>& got) {
  // Array literals: "{after0,after1,...}" and "{want0,want1,...}".
  std::string afters = "{", limits = "{";
  for (std::size_t b = 0; b < pointers.size(); ++b) {
    if (b) {
      afters.push_back(',');
      limits.push_back(',');
    }
    afters += text(pointers[b]);
    limits += text(static_cast<std::int64_t>(wants[b]));
  }
  afters.push_back('}');
  limits.push_back('}');
  const auto rows = db_.sql().exec_prepared("mm_scan_batches", {afters, limits});
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto b = static_cast<std::size_t>(rows.int64(i, 0) - 1);  // ordinality is 1-based
    if (b >= pointers.size()) continue;
    const std::size_t before = out.rows.size() + out.unreadable;
    read_row(rows, i, 1, out, pointers[b]);
    got[b] += static_cast<std::uint32_t>(out.rows.size() + out.unreadable - before);
  }
}

scan_result pg_scanner::sample(std::uint32_t wanted, std::uint64_t seed) {
  const auto start = std::chrono::steady_clock::now();
  scan_result out;
  if (wanted == 0) return out;
  try {
    const std::string from = " FROM \"" + source_ + "\" WHERE true" + shard_filter_;
    // A cold start's sample reads the whole table: a minute on both sides,
    // where a scan's short reads get the store's usual time.
    constexpr auto sample_limit = std::chrono::minutes(1);
    pg::longer_calls longer(
        db_.sql(), std::max<std::chrono::milliseconds>(db_.sql().call_timeout(), sample_limit));
    pg::transaction tx(db_.sql());
    tx.exec("SET LOCAL statement_timeout = '60s'");
    const auto rows = static_cast<std::uint64_t>(tx.exec("SELECT count(*)" + from).int64(0, 0));
    if (rows == 0) return out;
    // Out of 2^31 hash values: every row when the table is no larger than asked.
    const std::int64_t below =
        rows <= wanted
            ? (std::int64_t{1} << 31)
            : static_cast<std::int64_t>(static_cast<double>(wanted) / rows * 2147483648.0);
    out.rows.reserve(std::min<std::uint64_t>(rows, wanted + wanted / 4 + 64));
    std::int64_t last_id = 0;
    read(tx.exec_params(std::string("SELECT ") + scan_columns + from +
                            " AND (hashint8extended(id, $1) & 2147483647) < $2 ORDER BY id",
                        static_cast<std::int64_t>(seed), below),
         out, last_id);
    tx.commit();
    out.batches = 1;
    shuffle(out.rows, seed);
  } catch (const std::exception& e) {
    throw store_error("sample of '" + source_ + "' in PostgreSQL database '" + db_.where() +
                      "' failed: " + e.what());
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace mm
