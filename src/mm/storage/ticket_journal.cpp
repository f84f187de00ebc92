#include "mm/storage/ticket_journal.hpp"

#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>

#include <cstdio>
#include <optional>

namespace mm {

namespace {

std::string blob_of(const SQLite::Column& c) {
  return std::string(static_cast<const char*>(c.getBlob()), static_cast<std::size_t>(c.getBytes()));
}

std::int64_t signed_id(std::uint64_t id) {
  return static_cast<std::int64_t>(id);
}

journal_ticket ticket_row(SQLite::Statement& q) {
  return {static_cast<std::uint64_t>(q.getColumn(0).getInt64()), q.getColumn(1).getString(),
          q.getColumn(2).getString(), q.getColumn(3).getInt64(), blob_of(q.getColumn(4))};
}

// An event row of "SELECT seq, ticket_id, credential, queue, at, event".
journal_event event_row(SQLite::Statement& q) {
  return {static_cast<std::uint64_t>(q.getColumn(0).getInt64()),
          static_cast<std::uint64_t>(q.getColumn(1).getInt64()),
          q.getColumn(2).getString(),
          q.getColumn(3).getString(),
          q.getColumn(4).getInt64(),
          blob_of(q.getColumn(5))};
}

// The groups whose contested rows no longer wait (journal_groups.cpp), read
// in the writer's transaction: no other writer finishes one before it ends.
std::vector<std::uint32_t> lost_groups_of(SQLite::Database& sql, const journal_batch& b) {
  const auto rows = contested_rows(b);
  if (rows.empty()) return repeated_groups(b);
  std::vector<std::uint64_t> waiting;
  SQLite::Statement q(sql,
                      "SELECT 1 FROM session_ticket_journal WHERE ticket_id = ? AND state = 0");
  for (const std::uint64_t r : rows) {
    q.bind(1, signed_id(r));
    if (q.executeStep()) waiting.push_back(r);
    q.reset();
  }
  return merged(repeated_groups(b), groups_of(b, not_waiting(rows, std::move(waiting))));
}

// A ticket's rows in the services it also waits in, with its own row.
void write_guests(SQLite::Database& sql, const std::vector<journal_ticket>& created) {
  std::optional<SQLite::Statement> q;
  for (const auto& t : created)
    for (const auto& g : t.guests) {
      if (!q)
        q.emplace(sql,
                  "INSERT INTO session_guest_tickets (guest, ticket_id) VALUES (?, ?) "
                  "ON CONFLICT DO NOTHING");
      q->bind(1, g);
      q->bind(2, signed_id(t.id));
      q->exec();
      q->reset();
    }
}

// A contested ticket's guest rows go with its outcome (whoever writes it).
void drop_guests(SQLite::Database& sql, const std::vector<journal_outcome>& finished) {
  std::optional<SQLite::Statement> q;
  for (const auto& o : finished) {
    if (!o.contested) continue;
    if (!q) q.emplace(sql, "DELETE FROM session_guest_tickets WHERE ticket_id = ?");
    q->bind(1, signed_id(o.id));
    q->exec();
    q->reset();
  }
}

}  // namespace

std::uint64_t write_journal(database& db, const std::string& service, const journal_batch& in,
                            std::vector<std::uint32_t>* lost_groups) {
  return db.guarded("write the ticket journal", [&] {
    SQLite::Transaction tx(db.sql(), SQLite::TransactionBehavior::IMMEDIATE);
    const std::vector<std::uint32_t> lost = lost_groups_of(db.sql(), in);
    const journal_batch kept = lost.empty() ? journal_batch{} : without_groups(in, lost);
    const journal_batch& b = lost.empty() ? in : kept;
    // A stream's events follow its last number (the transaction holds the
    // file's write lock: no other writer numbers at the same time).
    std::uint64_t stream_last = 0;
    if (!b.event_stream.empty() && !b.events.empty()) {
      SQLite::Statement last(db.sql(), "SELECT value FROM session_counters WHERE name = ?");
      last.bind(1, event_counter_name(b.event_stream));
      if (last.executeStep())
        stream_last = static_cast<std::uint64_t>(last.getColumn(0).getInt64());
    }
    const auto seq_of = [&](std::size_t i) {
      return b.event_stream.empty() ? b.events[i].seq : stream_last + i + 1;
    };
    if (!b.created.empty()) {
      SQLite::Statement q(db.sql(),
                          "INSERT INTO session_ticket_journal (ticket_id, service, queues, "
                          "credential, created_at, ticket, state) VALUES (?, ?, ?, ?, ?, ?, 0) "
                          "ON CONFLICT (ticket_id) DO NOTHING");
      for (const auto& t : b.created) {
        q.bind(1, signed_id(t.id));
        q.bind(2, service);
        q.bind(3, t.queues);
        q.bind(4, t.credential);
        q.bind(5, t.created_unix_ms);
        q.bind(6, t.ticket.data(), static_cast<int>(t.ticket.size()));
        q.exec();
        q.reset();
      }
    }
    if (!b.finished.empty()) {
      SQLite::Statement q(db.sql(),
                          "UPDATE session_ticket_journal SET state = ?, finished_at = ?, "
                          "outcome = ? WHERE ticket_id = ? AND state = 0");
      for (const auto& o : b.finished) {
        q.bind(1, static_cast<int>(o.state));
        q.bind(2, o.finished_unix_ms);
        q.bind(3, o.outcome.data(), static_cast<int>(o.outcome.size()));
        q.bind(4, signed_id(o.id));
        q.exec();
        q.reset();
      }
    }
    write_guests(db.sql(), b.created);
    drop_guests(db.sql(), b.finished);
    if (!b.released.empty()) {
      // After the outcomes: a finished ticket no longer waits.
      SQLite::Statement q(db.sql(),
                          "DELETE FROM session_player_claims WHERE ticket_id = ? AND NOT EXISTS "
                          "(SELECT 1 FROM session_ticket_journal j WHERE j.ticket_id = "
                          "session_player_claims.ticket_id AND j.state = 0)");
      for (const std::uint64_t t : b.released) {
        q.bind(1, signed_id(t));
        q.exec();
        q.reset();
      }
    }
    if (!b.events.empty()) {
      // The credential is the ticket row's, joined when the events are read
      // (a lookup per row here cost the writer a tenth of its time).
      SQLite::Statement q(db.sql(),
                          "INSERT INTO session_ticket_events (service, seq, ticket_id, credential, "
                          "queue, at, event, services) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
      for (std::size_t i = 0; i < b.events.size(); ++i) {
        const auto& e = b.events[i];
        q.bind(1, service);
        q.bind(2, signed_id(seq_of(i)));
        q.bind(3, signed_id(e.ticket));
        q.bind(4, e.credential);  // '' but for a game server's copy
        q.bind(5, e.queue);
        q.bind(6, e.at_unix_ms);
        q.bind(7, e.event.data(), static_cast<int>(e.event.size()));
        q.bind(8, e.services);
        q.exec();
        q.reset();
      }
      // The counter outlives the events that retention deletes, so a start
      // after a prune continues it instead of reusing numbers.
      SQLite::Statement counter(db.sql(),
                                "INSERT INTO session_counters (name, value) VALUES (?, ?) "
                                "ON CONFLICT (name) DO UPDATE SET value = "
                                "max(value, excluded.value)");
      counter.bind(1, event_counter_name(b.event_stream.empty() ? service : b.event_stream));
      counter.bind(
          2, signed_id(b.event_stream.empty() ? highest_seq(b) : seq_of(b.events.size() - 1)));
      counter.exec();
    }
    if (!b.backfills.empty()) {
      SQLite::Statement put(db.sql(),
                            "INSERT INTO session_backfills (service, queue, match_id, credential, "
                            "updated_at, state) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (service, "
                            "queue, match_id) DO UPDATE SET credential = excluded.credential, "
                            "updated_at = excluded.updated_at, state = excluded.state");
      SQLite::Statement drop(db.sql(),
                             "DELETE FROM session_backfills WHERE service = ? AND queue = ? AND "
                             "match_id = ?");
      // With partitions, a stopped match's id is free again in the same
      // transaction (claim_match).
      SQLite::Statement unclaim(db.sql(),
                                "DELETE FROM session_match_claims WHERE stream = ? AND "
                                "match_id = ? AND service = ?");
      for (const auto& f : b.backfills) {
        if (f.state.empty() && !b.event_stream.empty()) {
          unclaim.bind(1, b.event_stream);
          unclaim.bind(2, f.match_id);
          unclaim.bind(3, service);
          unclaim.exec();
          unclaim.reset();
        }
        SQLite::Statement& q = f.state.empty() ? drop : put;
        q.bind(1, service);
        q.bind(2, f.queue);
        q.bind(3, f.match_id);
        if (!f.state.empty()) {
          q.bind(4, f.credential);
          q.bind(5, f.updated_unix_ms);
          q.bind(6, f.state.data(), static_cast<int>(f.state.size()));
        }
        q.exec();
        q.reset();
      }
    }
    tx.commit();
    if (lost_groups) *lost_groups = lost;
    if (b.events.empty()) return std::uint64_t{0};
    return b.event_stream.empty() ? highest_seq(b) : seq_of(b.events.size() - 1);
  });
}

std::vector<journal_event> read_stream_events(database& db, const std::string& stream,
                                              std::uint64_t after, std::size_t max) {
  return db.guarded("read the events of a stream", [&] {
    std::vector<journal_event> out;
    SQLite::Statement q(db.sql(),
                        "SELECT seq, ticket_id, credential, queue, at, event, services FROM "
                        "session_ticket_events WHERE seq > ? AND (service = ? OR "
                        "substr(service, 1, length(?)) = ?) ORDER BY seq LIMIT ?");
    const std::string prefix = stream + "/";
    q.bind(1, signed_id(after));
    q.bind(2, stream);
    q.bind(3, prefix);
    q.bind(4, prefix);
    q.bind(5, static_cast<std::int64_t>(max));
    while (q.executeStep()) {
      out.push_back(event_row(q));
      out.back().services = q.getColumn(6).getString();
    }
    return out;
  });
}

std::vector<journal_ticket> read_waiting_rows(database& db,
                                              const std::vector<std::uint64_t>& serials) {
  return db.guarded("read waiting tickets", [&] {
    std::vector<journal_ticket> out;
    SQLite::Statement q(db.sql(),
                        "SELECT ticket_id, queues, credential, created_at, ticket FROM "
                        "session_ticket_journal WHERE ticket_id = ? AND state = 0");
    for (const std::uint64_t s : serials) {
      q.bind(1, signed_id(s));
      if (q.executeStep()) out.push_back(ticket_row(q));
      q.reset();
    }
    return out;
  });
}

std::vector<journal_ticket> read_waiting_tickets(database& db, const std::string& service) {
  return db.guarded("read the waiting tickets", [&] {
    std::vector<journal_ticket> out;
    SQLite::Statement q(db.sql(),
                        "SELECT ticket_id, queues, credential, created_at, ticket FROM "
                        "session_ticket_journal WHERE service = ? AND state = 0 "
                        "ORDER BY created_at, ticket_id");
    q.bind(1, service);
    while (q.executeStep()) out.push_back(ticket_row(q));
    return out;
  });
}

std::vector<journal_ticket> read_guest_tickets(database& db, const std::string& service) {
  return db.guarded("read the guest tickets", [&] {
    std::vector<journal_ticket> out;
    SQLite::Statement q(db.sql(),
                        "SELECT j.ticket_id, j.queues, j.credential, j.created_at, j.ticket FROM "
                        "session_guest_tickets g JOIN session_ticket_journal j ON j.ticket_id = "
                        "g.ticket_id WHERE g.guest = ? AND j.state = 0 "
                        "ORDER BY j.created_at, j.ticket_id");
    q.bind(1, service);
    while (q.executeStep()) out.push_back(ticket_row(q));
    return out;
  });
}

std::vector<journal_backfill> read_backfills(database& db, const std::string& service) {
  return db.guarded("read the backfills", [&] {
    std::vector<journal_backfill> out;
    SQLite::Statement q(db.sql(),
                        "SELECT queue, match_id, credential, updated_at, state FROM "
                        "session_backfills WHERE service = ? ORDER BY queue, match_id");
    q.bind(1, service);
    while (q.executeStep())
      out.push_back({q.getColumn(0).getString(), q.getColumn(1).getString(),
                     q.getColumn(2).getString(), q.getColumn(3).getInt64(),
                     blob_of(q.getColumn(4))});
    return out;
  });
}

journal_contents read_journal(database& db, const std::string& service, const journal_read& r) {
  journal_contents out;
  out.waiting = read_waiting_tickets(db, service);
  out.backfills = read_backfills(db, service);
  db.guarded("read the ticket journal", [&] {
    SQLite::Statement f(db.sql(),
                        "SELECT ticket_id, credential, state, finished_at, outcome FROM "
                        "session_ticket_journal WHERE service = ? AND state <> 0 AND "
                        "finished_at >= ? ORDER BY finished_at DESC, ticket_id LIMIT ?");
    f.bind(1, service);
    f.bind(2, r.retained_since_unix_ms);
    f.bind(3, static_cast<std::int64_t>(r.max_retained));
    while (f.executeStep())
      out.retained.push_back({static_cast<std::uint64_t>(f.getColumn(0).getInt64()),
                              f.getColumn(1).getString(),
                              static_cast<std::uint8_t>(f.getColumn(2).getInt()),
                              f.getColumn(3).getInt64(), blob_of(f.getColumn(4))});
    // The counter, or the newest event for a journal written before it.
    SQLite::Statement last(db.sql(),
                           "SELECT max(coalesce((SELECT value FROM session_counters WHERE "
                           "name = ?), 0), coalesce((SELECT max(seq) FROM "
                           "session_ticket_events WHERE service = ?), 0))");
    last.bind(1, event_counter_name(r.event_stream.empty() ? service : r.event_stream));
    last.bind(2, service);
    if (last.executeStep()) out.last_seq = static_cast<std::uint64_t>(last.getColumn(0).getInt64());
    // An event's credential is '' but for a game server's copy: the reader
    // takes it from the ticket (session_journal.cpp).
    SQLite::Statement e(db.sql(),
                        "SELECT seq, ticket_id, credential, queue, at, event FROM "
                        "session_ticket_events WHERE service = ? AND seq > ? ORDER BY seq LIMIT ?");
    e.bind(1, service);
    e.bind(2, signed_id(r.events_after));
    e.bind(3, static_cast<std::int64_t>(r.max_events));
    while (e.executeStep()) out.events.push_back(event_row(e));
  });
  return out;
}

void prune_journal(database& db, const std::string& service, const journal_prune& p) {
  db.guarded("prune the ticket journal", [&] {
    SQLite::Transaction tx(db.sql(), SQLite::TransactionBehavior::IMMEDIATE);
    SQLite::Statement rows(db.sql(),
                           "DELETE FROM session_ticket_journal WHERE service = ? AND state <> 0 "
                           "AND (finished_at < ? OR ticket_id IN (SELECT ticket_id FROM "
                           "session_ticket_journal WHERE service = ? AND state <> 0 "
                           "ORDER BY finished_at DESC LIMIT -1 OFFSET ?))");
    rows.bind(1, service);
    rows.bind(2, p.before_unix_ms);
    rows.bind(3, service);
    rows.bind(4, static_cast<std::int64_t>(p.keep_finished));
    rows.exec();
    SQLite::Statement events(db.sql(),
                             "DELETE FROM session_ticket_events WHERE service = ? AND (at < ? OR "
                             "seq <= (SELECT coalesce(max(seq), 0) FROM session_ticket_events "
                             "WHERE service = ?) - ?)");
    events.bind(1, service);
    events.bind(2, p.before_unix_ms);
    events.bind(3, service);
    events.bind(4, static_cast<std::int64_t>(p.keep_events));
    events.exec();
    tx.commit();
  });
}

std::vector<journal_v8_row> read_v8_journal(database& db, const std::string& service) {
  return db.guarded("read the journal of before version 9", [&] {
    std::vector<journal_v8_row> out;
    SQLite::Statement q(db.sql(),
                        "SELECT ticket_id, queues, credential, created_at, ticket, state, "
                        "coalesce(finished_at, 0), outcome FROM session_ticket_journal_v8 "
                        "WHERE service = ?");
    q.bind(1, service);
    while (q.executeStep())
      out.push_back({ticket_row(q), static_cast<std::uint8_t>(q.getColumn(5).getInt()),
                     q.getColumn(6).getInt64(), blob_of(q.getColumn(7))});
    return out;
  });
}

void drop_v8_journal(database& db, const std::string& service) {
  db.guarded("drop the journal of before version 9", [&] {
    SQLite::Statement q(db.sql(), "DELETE FROM session_ticket_journal_v8 WHERE service = ?");
    q.bind(1, service);
    q.exec();
  });
}

std::vector<std::uint64_t> claim_players(database& db, const std::string& service,
                                         const std::vector<player_claim>& claims) {
  return db.guarded("claim the players of new tickets", [&] {
    std::vector<std::uint64_t> refused;
    SQLite::Transaction tx(db.sql(), SQLite::TransactionBehavior::IMMEDIATE);
    SQLite::Statement held(db.sql(), "SELECT 1 FROM session_player_claims WHERE player = ?");
    SQLite::Statement take(db.sql(),
                           "INSERT INTO session_player_claims (player, service, ticket_id) "
                           "VALUES (?, ?, ?)");
    for (const auto& c : claims) {
      bool free = true;
      for (const std::uint64_t p : c.players) {
        held.bind(1, signed_id(p));
        free = !held.executeStep();
        held.reset();
        if (!free) break;
      }
      if (!free) {
        refused.push_back(c.ticket);
        continue;
      }
      for (const std::uint64_t p : c.players) {
        take.bind(1, signed_id(p));
        take.bind(2, service);
        take.bind(3, signed_id(c.ticket));
        take.exec();
        take.reset();
      }
    }
    tx.commit();
    return refused;
  });
}

std::size_t drop_orphan_claims(database& db, const std::string& service) {
  return db.guarded("drop the player claims of tickets never written", [&] {
    SQLite::Statement q(db.sql(),
                        "DELETE FROM session_player_claims WHERE service = ? AND NOT EXISTS "
                        "(SELECT 1 FROM session_ticket_journal j WHERE j.ticket_id = "
                        "session_player_claims.ticket_id AND j.state = 0)");
    q.bind(1, service);
    return static_cast<std::size_t>(q.exec());
  });
}

std::uint64_t reserve_id_generation(database& db) {
  return db.guarded("reserve a ticket id generation", [&] {
    SQLite::Statement q(db.sql(),
                        "INSERT INTO session_counters (name, value) VALUES ('id_generation', 1) "
                        "ON CONFLICT (name) DO UPDATE SET value = value + 1 RETURNING value");
    if (!q.executeStep()) throw store_error("no id generation was returned");
    const auto g = static_cast<std::uint64_t>(q.getColumn(0).getInt64());
    q.reset();
    return g;
  });
}

id_key_words ticket_id_key(database& db, const id_key_words& fresh) {
  return db.guarded("read the ticket id key", [&] {
    SQLite::Statement put(db.sql(),
                          "INSERT INTO session_secrets (name, value) VALUES ('ticket_id_key', ?) "
                          "ON CONFLICT (name) DO NOTHING");
    put.bind(1, key_text(fresh));
    put.exec();
    SQLite::Statement get(db.sql(),
                          "SELECT value FROM session_secrets WHERE name = 'ticket_id_key'");
    if (!get.executeStep()) throw store_error("the ticket id key was not stored");
    return key_from_text(get.getColumn(0).getString());
  });
}

std::string event_counter_name(const std::string& service) {
  return "event_seq:" + service;
}

std::string key_text(const id_key_words& k) {
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(k[0]),
                static_cast<unsigned long long>(k[1]));
  return buf;
}

id_key_words key_from_text(const std::string& text) {
  id_key_words k{};
  if (text.size() != 32) throw store_error("the stored ticket id key is not 32 hex digits");
  for (std::size_t i = 0; i < 32; ++i) {
    const char c = text[i];
    const int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (v < 0) throw store_error("the stored ticket id key is not 32 hex digits");
    k[i / 16] = (k[i / 16] << 4) | static_cast<std::uint64_t>(v);
  }
  return k;
}

}  // namespace mm
