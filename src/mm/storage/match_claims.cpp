// The running matches' id claims on SQLite (ticket_journal.hpp, claim_match;
// schema/012_session_match_claims.sql).
#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>

#include <optional>

#include "mm/storage/ticket_journal.hpp"

namespace mm {

namespace {

std::optional<std::string> holder_of(SQLite::Database& sql, const std::string& stream,
                                     const std::string& match_id) {
  SQLite::Statement q(sql,
                      "SELECT service FROM session_match_claims WHERE stream = ? AND "
                      "match_id = ?");
  q.bind(1, stream);
  q.bind(2, match_id);
  if (!q.executeStep()) return std::nullopt;
  return q.getColumn(0).getString();
}

}  // namespace

std::string claim_match(database& db, const std::string& stream, const std::string& match_id,
                        const std::string& service) {
  return db.guarded("claim a running match's id", [&] {
    // One transaction holding the write lock: no other service claims the
    // id between the insert and the read.
    SQLite::Transaction tx(db.sql(), SQLite::TransactionBehavior::IMMEDIATE);
    SQLite::Statement take(db.sql(),
                           "INSERT INTO session_match_claims (stream, match_id, service) "
                           "VALUES (?, ?, ?) ON CONFLICT (stream, match_id) DO NOTHING");
    take.bind(1, stream);
    take.bind(2, match_id);
    take.bind(3, service);
    take.exec();
    std::string out = holder_of(db.sql(), stream, match_id).value_or(service);
    tx.commit();
    return out;
  });
}

std::optional<std::string> match_holder(database& db, const std::string& stream,
                                        const std::string& match_id) {
  return db.guarded("find a running match's partition",
                    [&] { return holder_of(db.sql(), stream, match_id); });
}

void release_match(database& db, const std::string& stream, const std::string& match_id,
                   const std::string& service) {
  db.guarded("release a running match's id", [&] {
    SQLite::Statement q(db.sql(),
                        "DELETE FROM session_match_claims WHERE stream = ? AND match_id = ? AND "
                        "service = ?");
    q.bind(1, stream);
    q.bind(2, match_id);
    q.bind(3, service);
    q.exec();
  });
}

std::size_t drop_orphan_match_claims(database& db, const std::string& service) {
  return db.guarded("drop the match claims of running matches never written", [&] {
    SQLite::Statement q(db.sql(),
                        "DELETE FROM session_match_claims WHERE service = ? AND NOT EXISTS "
                        "(SELECT 1 FROM session_backfills b WHERE b.service = "
                        "session_match_claims.service AND b.match_id = "
                        "session_match_claims.match_id)");
    q.bind(1, service);
    return static_cast<std::size_t>(q.exec());
  });
}

}  // namespace mm
