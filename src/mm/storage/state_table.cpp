#include "mm/storage/state_table.hpp"

#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>

namespace mm {

namespace {
std::string blob(const SQLite::Column& c) {
  return std::string(static_cast<const char*>(c.getBlob()), static_cast<std::size_t>(c.getBytes()));
}

}  // namespace

void write_state(database& db, const std::string& instance_id, const stored_state& s) {
  db.guarded("write the matchmaker state", [&] {
    SQLite::Transaction tx(db.sql(), SQLite::TransactionBehavior::IMMEDIATE);
    SQLite::Statement w(db.sql(),
                        "INSERT INTO matchmaker_state (instance_id, persisted_at, payload_version, "
                        "payload) VALUES (?, ?, ?, ?) ON CONFLICT(instance_id) DO UPDATE SET "
                        "persisted_at = excluded.persisted_at, "
                        "payload_version = excluded.payload_version, payload = excluded.payload");
    w.bind(1, instance_id);
    w.bind(2, static_cast<int64_t>(s.persisted_at_unix_ms));
    w.bind(3, s.payload_version);
    w.bind(4, s.payload.data(), static_cast<int>(s.payload.size()));
    w.exec();
    tx.commit();
  });
}

std::optional<stored_state> read_state(database& db, const std::string& instance_id) {
  return db.guarded("read the matchmaker state", [&]() -> std::optional<stored_state> {
    SQLite::Statement q(db.sql(),
                        "SELECT persisted_at, payload_version, payload FROM matchmaker_state "
                        "WHERE instance_id = ?");
    q.bind(1, instance_id);
    if (!q.executeStep()) return std::nullopt;
    stored_state s;
    s.persisted_at_unix_ms = q.getColumn(0).getInt64();
    s.payload_version = q.getColumn(1).getUInt();
    s.payload = blob(q.getColumn(2));
    return s;
  });
}

void set_aside_state(database& db, const std::string& instance_id, const std::string& reason,
                     std::int64_t now_unix_ms) {
  db.guarded("set the matchmaker state aside", [&] {
    SQLite::Transaction tx(db.sql(), SQLite::TransactionBehavior::IMMEDIATE);
    SQLite::Statement move(db.sql(),
                           "INSERT INTO matchmaker_state_rejected (instance_id, set_aside_at, "
                           "reason, persisted_at, payload) SELECT instance_id, ?, ?, "
                           "persisted_at, payload FROM matchmaker_state WHERE instance_id = ?");
    move.bind(1, static_cast<int64_t>(now_unix_ms));
    move.bind(2, reason);
    move.bind(3, instance_id);
    move.exec();
    SQLite::Statement del(db.sql(), "DELETE FROM matchmaker_state WHERE instance_id = ?");
    del.bind(1, instance_id);
    del.exec();
    tx.commit();
  });
}

std::vector<rejected_state> rejected_states(database& db, const std::string& instance_id) {
  return db.guarded("read rejected states", [&] {
    std::vector<rejected_state> out;
    SQLite::Statement q(db.sql(),
                        "SELECT set_aside_at, reason, COALESCE(persisted_at, 0), payload FROM "
                        "matchmaker_state_rejected WHERE instance_id = ? ORDER BY id");
    q.bind(1, instance_id);
    while (q.executeStep())
      out.push_back({q.getColumn(0).getInt64(), q.getColumn(1).getString(),
                     q.getColumn(2).getInt64(), blob(q.getColumn(3))});
    return out;
  });
}

}  // namespace mm
