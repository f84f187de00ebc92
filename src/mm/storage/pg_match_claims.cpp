// The running matches' id claims on PostgreSQL: the same rows and meaning as
// on SQLite (match_claims.cpp, ticket_journal.hpp's claim_match).
#include "mm/storage/pg_store.hpp"

namespace mm {

std::string pg_store::claim_match(const std::string& stream, const std::string& match_id,
                                  const std::string& service) {
  return pg_guarded(db_, "claim a running match's id", [&] {
    // One transaction (fenced): a second service inserting the same id waits
    // on the key until the first commits, then reads its row.
    std::vector<pg::statement> s{
        {"INSERT INTO session_match_claims (stream, match_id, service) VALUES ($1, $2, $3) "
         "ON CONFLICT (stream, match_id) DO NOTHING",
         {stream, match_id, service}},
        {"SELECT service FROM session_match_claims WHERE stream = $1 AND match_id = $2",
         {stream, match_id}}};
    const auto results = fenced_pipeline(s);
    const auto& holder = results.at(1);
    return holder.size() > 0 ? holder.text(0, 0) : service;
  });
}

std::optional<std::string> pg_store::match_holder(const std::string& stream,
                                                  const std::string& match_id) {
  return pg_guarded(db_, "find a running match's partition", [&]() -> std::optional<std::string> {
    const auto r = db_.sql().exec_params(
        "SELECT service FROM session_match_claims WHERE stream = $1 AND match_id = $2", stream,
        match_id);
    if (r.size() == 0) return std::nullopt;
    return r.text(0, 0);
  });
}

void pg_store::release_match(const std::string& stream, const std::string& match_id,
                             const std::string& service) {
  pg_guarded(db_, "release a running match's id", [&] {
    std::vector<pg::statement> s{
        {"DELETE FROM session_match_claims WHERE stream = $1 AND match_id = $2 AND service = $3",
         {stream, match_id, service}}};
    fenced_pipeline(s);
  });
}

std::size_t pg_store::drop_orphan_match_claims(const std::string& service) {
  return pg_guarded(db_, "drop the match claims of running matches never written", [&] {
    std::vector<pg::statement> s{
        {"DELETE FROM session_match_claims c WHERE c.service = $1 AND NOT EXISTS (SELECT 1 "
         "FROM session_backfills b WHERE b.service = c.service AND b.match_id = c.match_id)",
         {service}}};
    return static_cast<std::size_t>(fenced_pipeline(s).at(0).affected_rows());
  });
}

}  // namespace mm
