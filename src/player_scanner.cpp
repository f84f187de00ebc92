#include "player_scanner.hpp"

#include <SQLiteCpp/Statement.h>

#include <chrono>
#include <limits>

namespace mm {

namespace {
constexpr const char* columns = "id, mmr, attr0, attr1, attr2, attr3, payload, is_bot";
constexpr const char* column_names[] = {"id",    "mmr",   "attr0",   "attr1",
                                        "attr2", "attr3", "payload", "is_bot"};

const char* type_name(int t) {
  if (t == SQLite::INTEGER) return "INTEGER";
  if (t == SQLite::FLOAT) return "REAL";
  if (t == SQLite::TEXT) return "TEXT";
  if (t == SQLite::BLOB) return "BLOB";
  return "NULL";
}
}  // namespace

bool valid_sql_identifier(const std::string& name) {
  if (name.empty() || name.size() > 128) return false;
  if (name[0] >= '0' && name[0] <= '9') return false;
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'))
      return false;
  return true;
}

player_scanner::player_scanner(const std::string& path, const std::string& source,
                               std::uint64_t seed, int busy_timeout_ms)
    : db_(path, database_options{busy_timeout_ms, /*read_only=*/true}), source_(source), rng_(seed) {
  if (!valid_sql_identifier(source))
    throw store_error("scan source '" + source +
                      "' is not a plain table or view name (letters, digits, '_')");
  try {
    SQLite::Statement probe(db_.sql(), std::string("SELECT ") + columns + " FROM \"" + source_ +
                                           "\" LIMIT 0");
  } catch (const SQLite::Exception& e) {
    throw store_error("scan source '" + source + "' in '" + path +
                      "' cannot be read: " + e.what() +
                      " (it needs the columns id, mmr, attr0, attr1, attr2, attr3, payload, is_bot)");
  }
}

void player_scanner::read(SQLite::Statement& q, scan_result& out, std::int64_t& last_id) {
  while (q.executeStep()) {
    const auto id_col = q.getColumn(0);
    if (id_col.getType() != SQLite::INTEGER) {
      ++out.unreadable;
      if (out.reports.size() < max_reports)
        out.reports.push_back("row after id " + std::to_string(last_id) + ": id is " +
                              type_name(id_col.getType()));
      continue;
    }
    last_id = id_col.getInt64();
    std::string problem;
    for (int c = 1; c < 8 && problem.empty(); ++c) {
      const int t = q.getColumn(c).getType();
      const bool ok = c == 1 ? (t == SQLite::INTEGER || t == SQLite::FLOAT)
                      : c == 6 ? (t != SQLite::INTEGER && t != SQLite::FLOAT)
                      : c == 7 ? (t == SQLite::INTEGER || t == SQLite::Null)
                               : t == SQLite::INTEGER;
      if (!ok) problem = std::string(column_names[c]) + " is " + type_name(t);
    }
    if (!problem.empty() || last_id <= 0) {
      ++out.unreadable;
      if (problem.empty()) problem = "id must be positive";
      if (out.reports.size() < max_reports)
        out.reports.push_back("player " + std::to_string(last_id) + ": " + problem);
      continue;
    }
    player_row& r = out.rows.emplace_back();
    r.id = static_cast<player_id>(last_id);
    r.mmr = q.getColumn(1).getDouble();
    for (int a = 0; a < 4; ++a) r.attributes[a] = q.getColumn(2 + a).getInt64();
    const auto payload = q.getColumn(6);
    if (payload.getBytes() > 0)
      r.payload.assign(static_cast<const char*>(payload.getBlob()),
                       static_cast<std::size_t>(payload.getBytes()));
    r.is_bot = q.getColumn(7).getInt() != 0;
  }
}

scan_result player_scanner::scan(std::uint32_t fetch, std::uint32_t batch_size) {
  const auto start = std::chrono::steady_clock::now();
  scan_result out;
  if (fetch == 0 || batch_size == 0) return out;
  try {
    SQLite::Statement bounds(db_.sql(), "SELECT MIN(id), MAX(id) FROM \"" + source_ + "\"");
    bounds.executeStep();
    if (bounds.getColumn(0).isNull()) return out;  // empty table
    const std::int64_t lo = bounds.getColumn(0).getInt64(), hi = bounds.getColumn(1).getInt64();
    auto random_pointer = [&] {
      // Just below a random id, so the batch starts with that id's row.
      const auto span = static_cast<std::uint64_t>(hi - lo) + 1;
      return lo + static_cast<std::int64_t>(rng_.below(span)) - 1;
    };

    const std::uint32_t batches = (fetch + batch_size - 1) / batch_size;
    while (pointers_.size() < batches) pointers_.push_back(random_pointer());
    for (auto& p : pointers_)
      if (rng_.unit() < repoint_chance) p = random_pointer();

    SQLite::Statement from(db_.sql(), std::string("SELECT ") + columns + " FROM \"" + source_ +
                                          "\" WHERE id > ? ORDER BY id LIMIT ?");
    // After the end, from the start up to where this batch began: no row twice.
    SQLite::Statement wrap(db_.sql(), std::string("SELECT ") + columns + " FROM \"" + source_ +
                                          "\" WHERE id <= ? ORDER BY id LIMIT ?");
    out.rows.reserve(fetch);
    std::uint32_t left = fetch;
    for (std::uint32_t b = 0; b < batches; ++b, ++out.batches) {
      const std::uint32_t want = std::min(left, batch_size);
      const std::size_t before = out.rows.size() + out.unreadable;
      std::int64_t& pointer = pointers_[b];
      const std::int64_t began = pointer;
      from.bind(1, static_cast<int64_t>(pointer));
      from.bind(2, static_cast<int64_t>(want));
      read(from, out, pointer);
      from.reset();
      const auto got = static_cast<std::uint32_t>(out.rows.size() + out.unreadable - before);
      if (got < want) {
        ++out.wraps;
        wrap.bind(1, static_cast<int64_t>(began));
        wrap.bind(2, static_cast<int64_t>(want - got));
        read(wrap, out, pointer);
        wrap.reset();
      }
      left -= want;
    }
  } catch (const SQLite::Exception& e) {
    throw store_error("scan of '" + source_ + "' in '" + db_.path() + "' failed: " + e.what());
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace mm
