#include "mm/storage/player_scanner.hpp"

#include <SQLiteCpp/Statement.h>
#include <sqlite3.h>

#include <chrono>
#include <limits>

#include "mm/engine/stable_hash.hpp"

namespace mm {

namespace {
constexpr const char* columns = "id, mmr, attr0, attr1, attr2, attr3, payload, is_bot";
constexpr const char* column_names[] = {"id",    "mmr",   "attr0",   "attr1",
                                        "attr2", "attr3", "payload", "is_bot"};
const char* type_name(int t) {
  if (t == SQLITE_INTEGER) return "INTEGER";
  if (t == SQLITE_FLOAT) return "REAL";
  if (t == SQLITE_TEXT) return "TEXT";
  if (t == SQLITE_BLOB) return "BLOB";
  return "NULL";
}
}  // namespace

// The scan's hot loop reads through SQLite's C API: SQLiteCpp's Column copies a
// shared pointer per column read, which costs more than the read itself.
class player_scanner::statement {
 public:
  statement(SQLite::Database& db, const std::string& sql) {
    if (sqlite3_prepare_v2(db.getHandle(), sql.c_str(), -1, &stmt_, nullptr) != SQLITE_OK) {
      const std::string msg = sqlite3_errmsg(db.getHandle());
      sqlite3_finalize(stmt_);
      throw store_error(msg);
    }
  }
  ~statement() { sqlite3_finalize(stmt_); }
  statement(const statement&) = delete;
  statement& operator=(const statement&) = delete;

  void bind(int i, std::int64_t v) { sqlite3_bind_int64(stmt_, i, v); }
  bool step() {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    throw store_error(sqlite3_errmsg(sqlite3_db_handle(stmt_)));
  }
  void reset() { sqlite3_reset(stmt_); }
  int type(int c) const { return sqlite3_column_type(stmt_, c); }
  std::int64_t int64(int c) const { return sqlite3_column_int64(stmt_, c); }
  double real(int c) const { return sqlite3_column_double(stmt_, c); }
  std::string_view bytes(int c) const {
    const void* p = sqlite3_column_blob(stmt_, c);
    return {static_cast<const char*>(p), static_cast<std::size_t>(sqlite3_column_bytes(stmt_, c))};
  }

 private:
  sqlite3_stmt* stmt_ = nullptr;
};

namespace {
// mm_sample_hash(id, seed): 31 bits of a stable mix of both, never negative.
void sample_hash(sqlite3_context* ctx, int, sqlite3_value** argv) {
  const auto id = static_cast<std::uint64_t>(sqlite3_value_int64(argv[0]));
  const auto seed = static_cast<std::uint64_t>(sqlite3_value_int64(argv[1]));
  sqlite3_result_int64(ctx, static_cast<std::int64_t>(mix64(id ^ mix64(seed)) >> 33));
}
}  // namespace

player_scanner::player_scanner(const std::string& path, const std::string& source,
                               std::uint64_t seed, int busy_timeout_ms, std::uint32_t shard_count,
                               std::uint32_t shard_index)
    : row_scanner(seed),
      db_(path, database_options{busy_timeout_ms, /*read_only=*/true, /*single_thread=*/true}),
      source_(source) {
  // The scan jumps between pointers all over the table: let SQLite map the file
  // instead of a pread per page, and keep a larger page cache.
  db_.sql().exec("PRAGMA mmap_size = 1073741824");
  db_.sql().exec("PRAGMA cache_size = -65536");
  if (sqlite3_create_function_v2(db_.sql().getHandle(), "mm_sample_hash", 2,
                                 SQLITE_UTF8 | SQLITE_DETERMINISTIC, nullptr, sample_hash, nullptr,
                                 nullptr, nullptr) != SQLITE_OK)
    throw store_error("cannot register mm_sample_hash on '" + path + "'");
  if (shard_count > 1)
    shard_filter_ = " AND id % " + std::to_string(shard_count) + " = " +
                    std::to_string(shard_index % shard_count);
  if (!valid_sql_identifier(source))
    throw store_error("scan source '" + source +
                      "' is not a plain table or view name (letters, digits, '_')");
  try {
    SQLite::Statement probe(db_.sql(),
                            std::string("SELECT ") + columns + " FROM \"" + source_ + "\" LIMIT 0");
  } catch (const SQLite::Exception& e) {
    throw store_error(
        "scan source '" + source + "' in '" + path + "' cannot be read: " + e.what() +
        " (it needs the columns id, mmr, attr0, attr1, attr2, attr3, payload, is_bot)");
  }
  const std::string select = std::string("SELECT ") + columns + " FROM \"" + source_ + "\" WHERE ";
  // Two subqueries: SQLite answers a lone MIN or MAX from the index, but reads
  // the whole table for MIN(id), MAX(id) together.
  const std::string from_source = " FROM \"" + source_ + "\")";
  bounds_ = std::make_unique<statement>(
      db_.sql(), "SELECT (SELECT MIN(id)" + from_source + ", (SELECT MAX(id)" + from_source);
  after_ = std::make_unique<statement>(db_.sql(),
                                       select + "id > ?" + shard_filter_ + " ORDER BY id LIMIT ?");
  up_to_ = std::make_unique<statement>(db_.sql(),
                                       select + "id <= ?" + shard_filter_ + " ORDER BY id LIMIT ?");
}

player_scanner::~player_scanner() = default;

std::string player_scanner::describe() const {
  return "scan of '" + source_ + "' in '" + db_.path() + "'";
}

void player_scanner::read(statement& q, scan_result& out, std::int64_t& last_id) {
  while (q.step()) {
    if (q.type(0) != SQLITE_INTEGER) {
      unreadable(out,
                 "row after id " + std::to_string(last_id) + ": id is " + type_name(q.type(0)));
      continue;
    }
    last_id = q.int64(0);
    int bad = last_id <= 0 ? 0 : -1;  // the first unusable column
    for (int c = 1; c < 8 && bad < 0; ++c) {
      const int t = q.type(c);
      const bool ok = c == 1   ? (t == SQLITE_INTEGER || t == SQLITE_FLOAT)
                      : c == 6 ? (t != SQLITE_INTEGER && t != SQLITE_FLOAT)
                      : c == 7 ? (t == SQLITE_INTEGER || t == SQLITE_NULL)
                               : t == SQLITE_INTEGER;
      if (!ok) bad = c;
    }
    if (bad >= 0) {
      unreadable(out,
                 "player " + std::to_string(last_id) + ": " +
                     (bad == 0 ? std::string("id must be positive")
                               : std::string(column_names[bad]) + " is " + type_name(q.type(bad))));
      continue;
    }
    player_row& r = out.rows.emplace_back();
    r.id = static_cast<player_id>(last_id);
    r.mmr = q.real(1);
    for (int a = 0; a < 4; ++a) r.attributes[a] = q.int64(2 + a);
    r.payload = q.bytes(6);
    r.is_bot = q.int64(7) != 0;
  }
}

scan_result player_scanner::sample(std::uint32_t wanted, std::uint64_t seed) {
  const auto start = std::chrono::steady_clock::now();
  scan_result out;
  if (wanted == 0) return out;
  try {
    const std::string from = " FROM \"" + source_ + "\" WHERE 1" + shard_filter_;
    SQLite::Statement count(db_.sql(), "SELECT COUNT(*)" + from);
    count.executeStep();
    const auto rows = static_cast<std::uint64_t>(count.getColumn(0).getInt64());
    if (rows == 0) return out;
    // Out of 2^31 hash values: every row when the table is no larger than asked.
    const std::int64_t below =
        rows <= wanted
            ? (std::int64_t{1} << 31)
            : static_cast<std::int64_t>(static_cast<double>(wanted) / rows * 2147483648.0);
    statement q(db_.sql(), std::string("SELECT ") + columns + from +
                               " AND mm_sample_hash(id, ?) < ? ORDER BY id");
    q.bind(1, static_cast<std::int64_t>(seed));
    q.bind(2, below);
    out.rows.reserve(std::min<std::uint64_t>(rows, wanted + wanted / 4 + 64));
    std::int64_t last_id = 0;
    read(q, out, last_id);
    out.batches = 1;
    shuffle(out.rows, seed);
  } catch (const std::exception& e) {
    throw store_error("sample of '" + source_ + "' in '" + db_.path() + "' failed: " + e.what());
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

std::optional<std::pair<std::int64_t, std::int64_t>> player_scanner::id_range() {
  // Each statement is reset after use: one left open would hold its read
  // transaction, and with it an old snapshot of the table.
  statement& q = *bounds_;
  std::optional<std::pair<std::int64_t, std::int64_t>> range;
  if (q.step() && q.type(0) != SQLITE_NULL) range = std::pair{q.int64(0), q.int64(1)};
  q.reset();
  return range;
}

void player_scanner::read_after(std::int64_t after, std::uint32_t limit, scan_result& out,
                                std::int64_t& last_id) {
  read_from(*after_, after, limit, out, last_id);
}

void player_scanner::read_up_to(std::int64_t upto, std::uint32_t limit, scan_result& out,
                                std::int64_t& last_id) {
  read_from(*up_to_, upto, limit, out, last_id);
}

void player_scanner::read_from(statement& q, std::int64_t bound, std::uint32_t limit,
                               scan_result& out, std::int64_t& last_id) {
  q.bind(1, bound);
  q.bind(2, limit);
  read(q, out, last_id);
  q.reset();
}

}  // namespace mm
