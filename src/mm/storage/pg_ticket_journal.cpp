// The session tickets' journal on PostgreSQL: the same rows and meaning as on
// SQLite (ticket_journal.cpp); bytes as bytea.
#include <algorithm>
#include <set>

#include "mm/storage/pg_store.hpp"

namespace mm {

namespace {

pg::param bytes(const std::string& s) {
  return pg::param::bytes(s);
}

std::int64_t signed_id(std::uint64_t id) {
  return static_cast<std::int64_t>(id);
}

// "($k::t0, $k+1::t1, ...), (...)" for `rows` rows of `casts`' columns, the
// parameters numbered from `first`.
std::string rows_of(std::size_t rows, const std::vector<const char*>& casts, std::size_t first) {
  std::string out;
  out.reserve(rows * casts.size() * 12);
  std::size_t n = first;
  for (std::size_t r = 0; r < rows; ++r) {
    out += r ? ",(" : "(";
    for (std::size_t c = 0; c < casts.size(); ++c) {
      if (c) out += ',';
      out += '$' + std::to_string(n++) + "::" + casts[c];
    }
    out += ')';
  }
  return out;
}

// The event rows of "SELECT seq, ticket_id, credential, queue, at, event".
std::vector<journal_event> event_rows(const pg::result& ev) {
  std::vector<journal_event> out;
  for (std::size_t i = 0; i < ev.size(); ++i)
    out.push_back({static_cast<std::uint64_t>(ev.int64(i, 0)),
                   static_cast<std::uint64_t>(ev.int64(i, 1)), ev.text(i, 2), ev.text(i, 3),
                   ev.int64(i, 4), ev.bytes(i, 5)});
  return out;
}

// The rows of "SELECT ticket_id, queues, credential, created_at, ticket".
std::vector<journal_ticket> ticket_rows(const pg::result& r) {
  std::vector<journal_ticket> out;
  out.reserve(r.size());
  for (std::size_t i = 0; i < r.size(); ++i)
    out.push_back({static_cast<std::uint64_t>(r.int64(i, 0)), r.text(i, 1), r.text(i, 2),
                   r.int64(i, 3), r.bytes(i, 4)});
  return out;
}

// Rows per multi-row statement: well under PostgreSQL's 65,535 parameters.
constexpr std::size_t rows_per_statement = 1000;

// "ARRAY[$k::bigint, ...]" of `ids`, their parameters appended to `params`.
std::string id_array(const std::vector<std::uint64_t>& ids, std::vector<pg::param>& params) {
  std::string out = "ARRAY[";
  for (std::size_t i = 0; i < ids.size(); ++i) {
    params.push_back(pg::to_param(signed_id(ids[i])));
    out += (i ? ",$" : "$") + std::to_string(params.size()) + "::bigint";
  }
  return out + "]";
}

// The first statement of a batch with contested rows: it locks them, in
// the order of their ids (two writers never wait on each other), and fails
// with a division by zero unless every one still waits. The locks hold to
// the commit: no other writer finishes one of them meanwhile.
pg::statement contested_guard(const std::vector<std::uint64_t>& rows) {
  pg::statement st{{}, {}};
  const std::string ids = id_array(rows, st.params);
  st.sql =
      "SELECT 1 / ((SELECT count(*) FROM (SELECT ticket_id FROM session_ticket_journal WHERE "
      "ticket_id = ANY(" +
      ids + ") AND state = 0 ORDER BY ticket_id FOR UPDATE) w) = " + std::to_string(rows.size()) +
      ")::int";
  return st;
}

// A ticket's rows in the services it also waits in (with its own row), and
// a contested ticket's rows dropped with its outcome, whoever writes it.
void guest_rows(const journal_batch& b, std::vector<pg::statement>& s) {
  pg::statement add{{}, {}};
  std::size_t rows = 0;
  for (const auto& t : b.created)
    for (const auto& g : t.guests) {
      add.params.insert(add.params.end(), {g, pg::to_param(signed_id(t.id))});
      ++rows;
    }
  if (rows > 0) {
    add.sql = "INSERT INTO session_guest_tickets (guest, ticket_id) SELECT v.* FROM (VALUES " +
              rows_of(rows, {"text", "bigint"}, 1) + ") AS v ON CONFLICT DO NOTHING";
    s.push_back(std::move(add));
  }
  std::vector<std::uint64_t> gone;
  for (const auto& o : b.finished)
    if (o.contested) gone.push_back(o.id);
  if (gone.empty()) return;
  pg::statement drop{{}, {}};
  drop.sql = "DELETE FROM session_guest_tickets WHERE ticket_id = ANY(" +
             id_array(gone, drop.params) + ")";
  s.push_back(std::move(drop));
}

// The contested rows among `rows` that no longer wait (read outside any
// transaction: a finished row never waits again).
std::vector<std::uint64_t> finished_rows(pg::connection& sql,
                                         const std::vector<std::uint64_t>& rows) {
  std::vector<pg::param> params;
  const std::string ids = id_array(rows, params);
  const auto r = sql.exec("SELECT ticket_id FROM session_ticket_journal WHERE ticket_id = ANY(" +
                              ids + ") AND state = 0",
                          params);
  std::vector<std::uint64_t> waiting;
  for (std::size_t i = 0; i < r.size(); ++i)
    waiting.push_back(static_cast<std::uint64_t>(r.int64(i, 0)));
  return not_waiting(rows, std::move(waiting));
}

}  // namespace

std::uint64_t pg_store::write_journal(const std::string& service, const journal_batch& in,
                                      std::vector<std::uint32_t>* lost_groups) {
  return pg_guarded(db_, "write the ticket journal", [&] {
    // Groups (ticket_journal.hpp): the batch is sent with a guard over its
    // contested rows; when the guard fails, the rows that no longer wait are
    // read, their groups left out, and the rest sent again. Each round
    // leaves out at least one more group, or ends.
    std::vector<std::uint32_t> lost = repeated_groups(in);
    journal_batch kept = lost.empty() ? journal_batch{} : without_groups(in, lost);
    const std::size_t rounds = contested_rows(in).size() + 1;
    for (std::size_t round = 0;; ++round) {
      const journal_batch& b = lost.empty() ? in : kept;
      const auto rows = contested_rows(b);
      try {
        const std::uint64_t last = write_batch(service, b, rows);
        if (lost_groups) *lost_groups = lost;
        return last;
      } catch (const pg::failure& e) {
        const std::size_t guard_at = fence_.empty() ? 0 : 1;
        if (rows.empty() || e.state != "22012" || e.statement != guard_at || round + 1 >= rounds)
          throw;
        for (const std::uint32_t g : groups_of(b, finished_rows(db_.sql(), rows)))
          lost.insert(std::upper_bound(lost.begin(), lost.end(), g), g);
        kept = without_groups(in, lost);
      }
    }
  });
}

// One round of write_journal: every row in one round trip (a pipeline: one
// transaction, fenced), the guard first when there are contested rows.
std::uint64_t pg_store::write_batch(const std::string& service, const journal_batch& b,
                                    const std::vector<std::uint64_t>& contested) {
  {
    std::vector<pg::statement> s;
    if (!contested.empty()) s.push_back(contested_guard(contested));
    // One multi-row statement per kind of row (and per 1,000 rows): the
    // server parses, plans and runs one statement, not one per row.
    for (std::size_t from = 0; from < b.created.size(); from += rows_per_statement) {
      const std::size_t n = std::min(rows_per_statement, b.created.size() - from);
      pg::statement st{
          "INSERT INTO session_ticket_journal (ticket_id, service, queues, "
          "credential, created_at, ticket, state) SELECT v.*, 0 FROM (VALUES " +
              rows_of(n, {"bigint", "text", "text", "text", "bigint", "bytea"}, 1) +
              ") AS v WHERE true ON CONFLICT (ticket_id) DO NOTHING",
          {}};
      for (std::size_t i = from; i < from + n; ++i) {
        const auto& t = b.created[i];
        st.params.insert(st.params.end(),
                         {pg::to_param(signed_id(t.id)), service, t.queues, t.credential,
                          pg::to_param(t.created_unix_ms), bytes(t.ticket)});
      }
      s.push_back(std::move(st));
    }
    // A ticket's first outcome in the batch is the one kept, as when they
    // were written one by one (the later ones found it finished already).
    std::vector<const journal_outcome*> outcomes;
    {
      std::set<std::uint64_t> seen;
      for (const auto& o : b.finished)
        if (seen.insert(o.id).second) outcomes.push_back(&o);
    }
    for (std::size_t from = 0; from < outcomes.size(); from += rows_per_statement) {
      const std::size_t n = std::min(rows_per_statement, outcomes.size() - from);
      pg::statement st{
          "UPDATE session_ticket_journal j SET state = v.state, finished_at = v.at, "
          "outcome = v.outcome FROM (VALUES " +
              rows_of(n, {"smallint", "bigint", "bytea", "bigint"}, 1) +
              ") AS v(state, at, outcome, id) WHERE j.ticket_id = v.id AND "
              "j.state = 0",
          {}};
      for (std::size_t i = from; i < from + n; ++i) {
        const auto& o = *outcomes[i];
        st.params.insert(st.params.end(),
                         {pg::to_param(static_cast<int>(o.state)), pg::to_param(o.finished_unix_ms),
                          bytes(o.outcome), pg::to_param(signed_id(o.id))});
      }
      s.push_back(std::move(st));
    }
    // A stream's events follow its last number: the counter's row is
    // raised first, and its lock, held to the commit, makes every other
    // writer of the stream wait, so numbers are never taken twice and come
    // in commit order. Each event is then the row's new value less its
    // distance from the batch's end.
    const bool streamed = !b.event_stream.empty() && !b.events.empty();
    std::size_t stream_statement = 0;
    if (streamed) {
      stream_statement = s.size();
      s.push_back(
          {"INSERT INTO session_counters (name, value) VALUES ($1, $2) ON CONFLICT "
           "(name) DO UPDATE SET value = session_counters.value + $2 RETURNING value",
           {event_counter_name(b.event_stream),
            pg::to_param(static_cast<std::int64_t>(b.events.size()))}});
    }
    for (std::size_t from = 0; from < b.events.size(); from += rows_per_statement) {
      const std::size_t n = std::min(rows_per_statement, b.events.size() - from);
      // An event's credential is '' but for a game server's copy: the reader
      // takes it from the ticket (session_journal.cpp).
      pg::statement st{
          streamed
              ? "INSERT INTO session_ticket_events (service, seq, ticket_id, credential, "
                "queue, at, event, services) SELECT $1, (SELECT value FROM "
                "session_counters WHERE name = $2) - v.from_end, v.t, v.c, v.q, v.a, v.e, "
                "v.s FROM (VALUES " +
                    rows_of(n, {"bigint", "bigint", "text", "text", "bigint", "bytea", "text"}, 3) +
                    ") AS v(from_end, t, c, q, a, e, s)"
              : "INSERT INTO session_ticket_events (service, seq, ticket_id, credential, "
                "queue, at, event, services) SELECT $1, v.* FROM (VALUES " +
                    rows_of(n, {"bigint", "bigint", "text", "text", "bigint", "bytea", "text"}, 2) +
                    ") AS v",
          {service}};
      if (streamed) st.params.push_back(event_counter_name(b.event_stream));
      for (std::size_t i = from; i < from + n; ++i) {
        const auto& e = b.events[i];
        const std::uint64_t seq = streamed ? b.events.size() - 1 - i : e.seq;
        st.params.insert(st.params.end(), {pg::to_param(signed_id(seq)),
                                           pg::to_param(signed_id(e.ticket)), e.credential, e.queue,
                                           pg::to_param(e.at_unix_ms), bytes(e.event), e.services});
      }
      s.push_back(std::move(st));
    }
    for (std::size_t from = 0; from < b.released.size(); from += rows_per_statement) {
      const std::size_t n = std::min(rows_per_statement, b.released.size() - from);
      pg::statement st{"DELETE FROM session_player_claims c USING (VALUES " +
                           rows_of(n, {"bigint"}, 1) +
                           ") AS v(t) WHERE c.ticket_id = v.t AND NOT EXISTS (SELECT 1 FROM "
                           "session_ticket_journal j WHERE j.ticket_id = v.t AND j.state = 0)",
                       {}};
      for (std::size_t i = from; i < from + n; ++i)
        st.params.push_back(pg::to_param(signed_id(b.released[i])));
      s.push_back(std::move(st));
    }
    if (!b.events.empty() && !streamed)  // outlives the events retention deletes
      s.push_back(
          {"INSERT INTO session_counters (name, value) VALUES ($1, $2) ON CONFLICT (name) "
           "DO UPDATE SET value = greatest(session_counters.value, excluded.value)",
           {event_counter_name(service), pg::to_param(signed_id(highest_seq(b)))}});
    for (const auto& f : b.backfills) {
      // With partitions, a stopped match's id is free again in the same
      // transaction (claim_match).
      if (f.state.empty() && !b.event_stream.empty())
        s.push_back(
            {"DELETE FROM session_match_claims WHERE stream = $1 AND match_id = $2 AND "
             "service = $3",
             {b.event_stream, f.match_id, service}});
      if (f.state.empty())
        s.push_back(
            {"DELETE FROM session_backfills WHERE service = $1 AND queue = $2 AND "
             "match_id = $3",
             {service, f.queue, f.match_id}});
      else
        s.push_back(
            {"INSERT INTO session_backfills (service, queue, match_id, credential, updated_at, "
             "state) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (service, queue, match_id) DO "
             "UPDATE SET credential = excluded.credential, updated_at = excluded.updated_at, "
             "state = excluded.state",
             {service, f.queue, f.match_id, f.credential, pg::to_param(f.updated_unix_ms),
              bytes(f.state)}});
    }
    guest_rows(b, s);
    const auto results = fenced_pipeline(s);
    if (streamed) return static_cast<std::uint64_t>(results.at(stream_statement).int64(0, 0));
    return highest_seq(b);
  }
}

std::vector<journal_ticket> pg_store::read_waiting_tickets(const std::string& service) {
  return pg_guarded(db_, "read the waiting tickets", [&] {
    return ticket_rows(
        db_.sql().exec_params("SELECT ticket_id, queues, credential, created_at, ticket FROM "
                              "session_ticket_journal WHERE service = $1 AND state = 0 "
                              "ORDER BY created_at, ticket_id",
                              service));
  });
}

std::vector<journal_ticket> pg_store::read_guest_tickets(const std::string& service) {
  return pg_guarded(db_, "read the guest tickets", [&] {
    return ticket_rows(db_.sql().exec_params(
        "SELECT j.ticket_id, j.queues, j.credential, j.created_at, j.ticket FROM "
        "session_guest_tickets g JOIN session_ticket_journal j ON j.ticket_id = g.ticket_id "
        "WHERE g.guest = $1 AND j.state = 0 ORDER BY j.created_at, j.ticket_id",
        service));
  });
}

std::vector<journal_ticket> pg_store::read_waiting_rows(const std::vector<std::uint64_t>& serials) {
  if (serials.empty()) return {};
  return pg_guarded(db_, "read waiting tickets", [&] {
    std::vector<pg::param> params;
    const std::string ids = id_array(serials, params);
    return ticket_rows(db_.sql().exec(
        "SELECT ticket_id, queues, credential, created_at, ticket FROM session_ticket_journal "
        "WHERE ticket_id = ANY(" +
            ids + ") AND state = 0",
        params));
  });
}

std::vector<journal_backfill> pg_store::read_backfills(const std::string& service) {
  return pg_guarded(db_, "read the backfills", [&] {
    std::vector<journal_backfill> out;
    const auto r = db_.sql().exec_params(
        "SELECT queue, match_id, credential, updated_at, state FROM "
        "session_backfills WHERE service = $1 ORDER BY queue, match_id",
        service);
    for (std::size_t i = 0; i < r.size(); ++i)
      out.push_back({r.text(i, 0), r.text(i, 1), r.text(i, 2), r.int64(i, 3), r.bytes(i, 4)});
    return out;
  });
}

journal_contents pg_store::read_journal(const std::string& service, const journal_read& rd) {
  journal_contents out;
  out.waiting = read_waiting_tickets(service);
  out.backfills = read_backfills(service);
  pg_guarded(db_, "read the ticket journal", [&] {
    auto& c = db_.sql();
    const auto kept = c.exec_params(
        "SELECT ticket_id, credential, state, finished_at, outcome FROM "
        "session_ticket_journal WHERE service = $1 AND state <> 0 AND finished_at >= $2 "
        "ORDER BY finished_at DESC, ticket_id LIMIT $3",
        service, rd.retained_since_unix_ms, static_cast<std::int64_t>(rd.max_retained));
    for (std::size_t i = 0; i < kept.size(); ++i)
      out.retained.push_back({static_cast<std::uint64_t>(kept.int64(i, 0)), kept.text(i, 1),
                              static_cast<std::uint8_t>(kept.int64(i, 2)), kept.int64(i, 3),
                              kept.bytes(i, 4)});
    out.last_seq = static_cast<std::uint64_t>(
        c.exec_params("SELECT greatest(coalesce((SELECT value FROM session_counters WHERE "
                      "name = $2), 0), coalesce((SELECT max(seq) FROM "
                      "session_ticket_events WHERE service = $1), 0))",
                      service,
                      event_counter_name(rd.event_stream.empty() ? service : rd.event_stream))
            .int64(0, 0));
    const auto ev = c.exec_params(
        "SELECT seq, ticket_id, credential, queue, at, event FROM session_ticket_events "
        "WHERE service = $1 AND seq > $2 ORDER BY seq LIMIT $3",
        service, signed_id(rd.events_after), static_cast<std::int64_t>(rd.max_events));
    out.events = event_rows(ev);
  });
  return out;
}

std::vector<journal_event> pg_store::read_stream_events(const std::string& stream,
                                                        std::uint64_t after, std::size_t max) {
  return pg_guarded(db_, "read the events of a stream", [&] {
    const auto r = db_.sql().exec_params(
        "SELECT seq, ticket_id, credential, queue, at, event, services FROM "
        "session_ticket_events WHERE seq > $1 AND (service = $2 OR starts_with(service, $3)) "
        "ORDER BY seq LIMIT $4",
        signed_id(after), stream, stream + "/", static_cast<std::int64_t>(max));
    auto out = event_rows(r);
    for (std::size_t i = 0; i < out.size(); ++i) out[i].services = r.text(i, 6);
    return out;
  });
}

void pg_store::prune_journal(const std::string& service, const journal_prune& p) {
  pg_guarded(db_, "prune the ticket journal", [&] {
    pg::transaction tx(db_.sql());
    check_fence(tx);
    tx.exec_params(
        "DELETE FROM session_ticket_journal WHERE service = $1 AND state <> 0 AND "
        "(finished_at < $2 OR ticket_id IN (SELECT ticket_id FROM session_ticket_journal "
        "WHERE service = $1 AND state <> 0 ORDER BY finished_at DESC OFFSET $3))",
        service, p.before_unix_ms, static_cast<std::int64_t>(p.keep_finished));
    tx.exec_params(
        "DELETE FROM session_ticket_events WHERE service = $1 AND (at < $2 OR seq <= "
        "(SELECT coalesce(max(seq), 0) FROM session_ticket_events WHERE service = $1) - $3)",
        service, p.before_unix_ms, static_cast<std::int64_t>(p.keep_events));
    tx.commit();
  });
}

std::vector<journal_v8_row> pg_store::read_v8_journal(const std::string& service) {
  return pg_guarded(db_, "read the journal of before version 9", [&] {
    std::vector<journal_v8_row> out;
    const auto r = db_.sql().exec_params(
        "SELECT ticket_id, queues, credential, created_at, ticket, state, "
        "coalesce(finished_at, 0), coalesce(outcome, ''::bytea) FROM session_ticket_journal_v8 "
        "WHERE service = $1",
        service);
    for (std::size_t i = 0; i < r.size(); ++i)
      out.push_back({{static_cast<std::uint64_t>(r.int64(i, 0)), r.text(i, 1), r.text(i, 2),
                      r.int64(i, 3), r.bytes(i, 4)},
                     static_cast<std::uint8_t>(r.int64(i, 5)),
                     r.int64(i, 6),
                     r.bytes(i, 7)});
    return out;
  });
}

void pg_store::drop_v8_journal(const std::string& service) {
  pg_guarded(db_, "drop the journal of before version 9", [&] {
    pg::transaction tx(db_.sql());
    check_fence(tx);
    tx.exec_params("DELETE FROM session_ticket_journal_v8 WHERE service = $1", service);
    tx.commit();
  });
}

std::vector<std::uint64_t> pg_store::claim_players(const std::string& service,
                                                   const std::vector<player_claim>& claims) {
  if (claims.empty()) return {};
  return pg_guarded(db_, "claim the players of new tickets", [&] {
    // Inserted in the players' order in every transaction, so that two
    // services claiming the same players wait for each other, never in a cycle.
    std::vector<std::pair<std::uint64_t, std::uint64_t>> rows;  // (player, ticket)
    for (const auto& c : claims)
      for (const std::uint64_t p : c.players) rows.emplace_back(p, c.ticket);
    std::sort(rows.begin(), rows.end());
    std::vector<pg::statement> s;
    for (std::size_t from = 0; from < rows.size(); from += rows_per_statement) {
      const std::size_t n = std::min(rows_per_statement, rows.size() - from);
      pg::statement st{
          "INSERT INTO session_player_claims (player, service, ticket_id) SELECT "
          "v.player, $1, v.ticket FROM (VALUES " +
              rows_of(n, {"bigint", "bigint"}, 2) +
              ") AS v(player, ticket) ORDER BY v.player ON CONFLICT (player) DO "
              "NOTHING",
          {service}};
      for (std::size_t i = from; i < from + n; ++i)
        st.params.insert(st.params.end(), {pg::to_param(signed_id(rows[i].first)),
                                           pg::to_param(signed_id(rows[i].second))});
      s.push_back(std::move(st));
    }
    // A ticket that got only some of its players gives them back; then the
    // tickets without a claim are the refused ones.
    const std::size_t first_check = s.size();
    for (std::size_t from = 0; from < claims.size(); from += rows_per_statement) {
      const std::size_t n = std::min(rows_per_statement, claims.size() - from);
      const std::string values = rows_of(n, {"bigint", "bigint"}, 1);
      pg::statement partial{
          "DELETE FROM session_player_claims c USING (VALUES " + values +
              ") AS v(ticket, players) WHERE c.ticket_id = v.ticket AND (SELECT count(*) FROM "
              "session_player_claims d WHERE d.ticket_id = v.ticket) < v.players",
          {}};
      for (std::size_t i = from; i < from + n; ++i)
        partial.params.insert(partial.params.end(),
                              {pg::to_param(signed_id(claims[i].ticket)),
                               pg::to_param(static_cast<std::int64_t>(claims[i].players.size()))});
      pg::statement refused{
          "SELECT v.ticket FROM (VALUES " + values +
              ") AS v(ticket, players) WHERE NOT EXISTS (SELECT 1 FROM session_player_claims c "
              "WHERE c.ticket_id = v.ticket)",
          partial.params};
      s.push_back(std::move(partial));
      s.push_back(std::move(refused));
    }
    const auto results = fenced_pipeline(s);
    std::vector<std::uint64_t> out;
    for (std::size_t i = first_check + 1; i < results.size(); i += 2)
      for (std::size_t r = 0; r < results[i].size(); ++r)
        out.push_back(static_cast<std::uint64_t>(results[i].int64(r, 0)));
    return out;
  });
}

std::size_t pg_store::drop_orphan_claims(const std::string& service) {
  return pg_guarded(db_, "drop the player claims of tickets never written", [&] {
    std::vector<pg::statement> s{
        {"DELETE FROM session_player_claims c WHERE c.service = $1 AND NOT EXISTS (SELECT 1 "
         "FROM session_ticket_journal j WHERE j.ticket_id = c.ticket_id AND j.state = 0)",
         {service}}};
    return static_cast<std::size_t>(fenced_pipeline(s).at(0).affected_rows());
  });
}

std::uint64_t pg_store::reserve_id_generation() {
  return pg_guarded(db_, "reserve a ticket id generation", [&] {
    pg::transaction tx(db_.sql());
    const auto g = tx.exec(
                         "INSERT INTO session_counters (name, value) VALUES ('id_generation', 1) "
                         "ON CONFLICT (name) DO UPDATE SET value = session_counters.value + 1 "
                         "RETURNING value")
                       .int64(0, 0);
    tx.commit();
    return static_cast<std::uint64_t>(g);
  });
}

id_key_words pg_store::ticket_id_key(const id_key_words& fresh) {
  return pg_guarded(db_, "read the ticket id key", [&] {
    pg::transaction tx(db_.sql());
    tx.exec_params(
        "INSERT INTO session_secrets (name, value) VALUES ('ticket_id_key', $1) "
        "ON CONFLICT (name) DO NOTHING",
        key_text(fresh));
    const auto text =
        tx.exec("SELECT value FROM session_secrets WHERE name = 'ticket_id_key'").text(0, 0);
    tx.commit();
    return key_from_text(text);
  });
}

}  // namespace mm
