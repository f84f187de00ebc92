#include "mm/storage/session_state_table.hpp"

#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>

namespace mm {

void write_session_state(database& db, const std::string& service, const session_state_rows& s,
                         std::int64_t now_unix_ms) {
  db.guarded("write the session state", [&] {
    SQLite::Transaction tx(db.sql(), SQLite::TransactionBehavior::IMMEDIATE);
    for (const char* table : {"session_tickets", "session_lobbies"}) {
      SQLite::Statement del(db.sql(), std::string("DELETE FROM ") + table + " WHERE service = ?");
      del.bind(1, service);
      del.exec();
    }
    SQLite::Statement t(db.sql(),
                        "INSERT INTO session_tickets (service, ticket_id, queue, created_at, "
                        "ticket, written_at) VALUES (?, ?, ?, ?, ?, ?)");
    for (const auto& x : s.tickets) {
      t.bind(1, service);
      t.bind(2, static_cast<int64_t>(x.id));
      t.bind(3, x.queue);
      t.bind(4, static_cast<int64_t>(x.created_unix_ms));
      t.bind(5, x.ticket);
      t.bind(6, static_cast<int64_t>(now_unix_ms));
      t.exec();
      t.reset();
    }
    SQLite::Statement l(db.sql(),
                        "INSERT INTO session_lobbies (service, lobby_id, mode, datacenter, "
                        "max_players, players, created_by_find, written_at, owner) "
                        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
    for (const auto& x : s.lobbies) {
      l.bind(1, service);
      l.bind(2, x.id);
      l.bind(3, x.mode);
      l.bind(4, x.datacenter);
      l.bind(5, static_cast<int64_t>(x.max_players));
      l.bind(6, static_cast<int64_t>(x.players));
      l.bind(7, x.created_by_find ? 1 : 0);
      l.bind(8, static_cast<int64_t>(now_unix_ms));
      l.bind(9, x.owner);
      l.exec();
      l.reset();
    }
    tx.commit();
  });
}

session_state_rows take_session_state(database& db, const std::string& service) {
  return db.guarded("take the session state", [&] {
    session_state_rows out;
    SQLite::Transaction tx(db.sql(), SQLite::TransactionBehavior::IMMEDIATE);
    SQLite::Statement t(db.sql(),
                        "SELECT ticket_id, queue, created_at, ticket FROM session_tickets "
                        "WHERE service = ? ORDER BY ticket_id");
    t.bind(1, service);
    while (t.executeStep())
      out.tickets.push_back({static_cast<std::uint64_t>(t.getColumn(0).getInt64()),
                             t.getColumn(1).getString(), t.getColumn(2).getInt64(),
                             t.getColumn(3).getString()});
    SQLite::Statement l(db.sql(),
                        "SELECT lobby_id, mode, datacenter, max_players, players, created_by_find, "
                        "owner FROM session_lobbies WHERE service = ? ORDER BY lobby_id");
    l.bind(1, service);
    while (l.executeStep())
      out.lobbies.push_back({l.getColumn(0).getString(), l.getColumn(1).getString(),
                             l.getColumn(2).getString(),
                             static_cast<std::uint32_t>(l.getColumn(3).getInt64()),
                             static_cast<std::uint32_t>(l.getColumn(4).getInt64()),
                             l.getColumn(5).getInt() != 0, l.getColumn(6).getString()});
    for (const char* table : {"session_tickets", "session_lobbies"}) {
      SQLite::Statement del(db.sql(), std::string("DELETE FROM ") + table + " WHERE service = ?");
      del.bind(1, service);
      del.exec();
    }
    tx.commit();
    return out;
  });
}

}  // namespace mm
