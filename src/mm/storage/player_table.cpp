#include "mm/storage/player_table.hpp"

#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>

#include <cmath>

namespace mm {

std::optional<std::string> row_problem_of(const player_row& row) {
  if (row.id == invalid_player) return "player id 0 is invalid";
  if (row.id > max_stored_player_id) return "player id must be below 2^63";
  return mmr_problem(row.mmr);
}

write_report upsert_players(database& db, std::span<const player_row> rows) {
  write_report report;
  const std::int64_t now = unix_ms_now();
  try {
    SQLite::Transaction tx(db.sql(), SQLite::TransactionBehavior::IMMEDIATE);
    SQLite::Statement up(db.sql(),
                         "INSERT INTO players (id, mmr, attr0, attr1, attr2, attr3, payload, "
                         "is_bot, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
                         "ON CONFLICT(id) DO UPDATE SET mmr = excluded.mmr, "
                         "attr0 = excluded.attr0, attr1 = excluded.attr1, "
                         "attr2 = excluded.attr2, attr3 = excluded.attr3, "
                         "payload = excluded.payload, is_bot = excluded.is_bot, "
                         "updated_at = excluded.updated_at");
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const player_row& r = rows[i];
      if (auto problem = row_problem_of(r)) {
        report.rejected.push_back({i, r.id, *problem});
        continue;
      }
      up.bind(1, static_cast<int64_t>(r.id));
      up.bind(2, r.mmr);
      for (int a = 0; a < 4; ++a) up.bind(3 + a, static_cast<int64_t>(r.attributes[a]));
      if (r.payload.empty())
        up.bind(7);
      else
        up.bind(7, r.payload.data(), static_cast<int>(r.payload.size()));
      up.bind(8, r.is_bot ? 1 : 0);
      up.bind(9, static_cast<int64_t>(r.updated_at_unix_ms ? r.updated_at_unix_ms : now));
      up.exec();
      up.reset();
      ++report.written;
    }
    tx.commit();
  } catch (const SQLite::Exception& e) {
    throw store_error("cannot write players to '" + db.path() + "': " + e.what());
  }
  return report;
}

std::uint64_t delete_players(database& db, std::span<const player_id> ids) {
  std::uint64_t deleted = 0;
  try {
    SQLite::Transaction tx(db.sql(), SQLite::TransactionBehavior::IMMEDIATE);
    SQLite::Statement del(db.sql(), "DELETE FROM players WHERE id = ?");
    for (player_id id : ids) {
      if (id == invalid_player || id > max_stored_player_id) continue;
      del.bind(1, static_cast<int64_t>(id));
      deleted += static_cast<std::uint64_t>(del.exec());
      del.reset();
    }
    tx.commit();
  } catch (const SQLite::Exception& e) {
    throw store_error("cannot delete players from '" + db.path() + "': " + e.what());
  }
  return deleted;
}

namespace {
constexpr const char* row_columns =
    "SELECT id, mmr, attr0, attr1, attr2, attr3, payload, is_bot, updated_at FROM players ";

player_row read_row(SQLite::Statement& q) {
  player_row r;
  r.id = static_cast<player_id>(q.getColumn(0).getInt64());
  r.mmr = q.getColumn(1).getDouble();
  for (int a = 0; a < 4; ++a) r.attributes[a] = q.getColumn(2 + a).getInt64();
  const auto payload = q.getColumn(6);
  r.payload.assign(static_cast<const char*>(payload.getBlob()),
                   static_cast<std::size_t>(payload.getBytes()));
  r.is_bot = q.getColumn(7).getInt() != 0;
  r.updated_at_unix_ms = q.getColumn(8).getInt64();
  return r;
}
}  // namespace

std::optional<player_row> find_player(database& db, player_id id) {
  if (id == invalid_player || id > max_stored_player_id) return std::nullopt;
  return db.guarded("read a player", [&]() -> std::optional<player_row> {
    SQLite::Statement q(db.sql(), std::string(row_columns) + "WHERE id = ?");
    q.bind(1, static_cast<int64_t>(id));
    if (!q.executeStep()) return std::nullopt;
    return read_row(q);
  });
}

std::vector<player_row> players_after(database& db, player_id after, std::size_t limit) {
  std::vector<player_row> out;
  if (after >= max_stored_player_id) return out;
  db.guarded("read players", [&] {
    SQLite::Statement q(db.sql(), std::string(row_columns) + "WHERE id > ? ORDER BY id LIMIT ?");
    q.bind(1, static_cast<int64_t>(after));
    q.bind(2, static_cast<int64_t>(limit));
    while (q.executeStep()) out.push_back(read_row(q));
  });
  return out;
}

std::uint64_t count_players(database& db) {
  return db.guarded("count players", [&] {
    SQLite::Statement q(db.sql(), "SELECT COUNT(*) FROM players");
    q.executeStep();
    return static_cast<std::uint64_t>(q.getColumn(0).getInt64());
  });
}

}  // namespace mm
