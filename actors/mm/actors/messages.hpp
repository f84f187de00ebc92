// Message types of the actor layer and their CAF `inspect` functions, so they
// can cross the network (CAF 0.17: each must also be registered with
// add_message_type; see register_message_types). The engine's own headers stay
// free of CAF: the inspect functions for its types live here.
#pragma once

#include <caf/meta/type_name.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "mm/engine/generic_profile.hpp"
#include "mm/engine/introspection.hpp"
#include "mm/engine/types.hpp"

namespace mm {

// The answer to a matchmaking request, in a shape that serializes (no
// std::optional, no string_view).
template <class Model>
struct match_reply {
  match_type type = match_type::none_found;
  player_id best_candidate_id = invalid_player;
  bool has_model = false;
  Model model{};
  float quality = 0;
  std::uint32_t players_tested = 0;
  std::string error;  // set for invalid_request

  static match_reply from(const match_response<Model>& r) {
    match_reply x;
    x.type = r.type;
    x.best_candidate_id = r.best_candidate_id;
    x.has_model = r.model.has_value();
    if (r.model) x.model = *r.model;
    x.quality = r.quality;
    x.players_tested = r.players_tested;
    x.error = std::string(r.error);
    return x;
  }
};

// A player state update from the game: no models means "no longer a target".
template <class Model>
struct player_update {
  player_id id = invalid_player;
  std::vector<Model> models;
};

// The most queries one batch message may carry (find_atom with a vector of
// requests): bounds what one message from the network makes a matchmaker do.
inline constexpr std::size_t max_batch_queries = 4096;
// The most player updates one message may carry (update_atom with a vector):
// a longer one is dropped whole and counted (client_stats::updates_refused).
inline constexpr std::size_t max_batch_updates = 4096;

// How far a query still travels through an instance set. The first instance
// is asked with hops_left = N - 1; one that finds none passes the query to the
// next instance itself (delegation: the answer goes straight back to the
// caller, never through a router actor).
struct set_route {
  std::uint32_t hops_left = 0;     // instances still to ask after this one
  bool fake_allowed = false;       // the caller's wish; only the last one asked may make a fake
  bool someone_said_none = false;  // an earlier instance found none (a later one may be down)
};

// The final answers to routed queries, counted where they were given: summed
// over an instance set (instances and supervisors) they are the game's view,
// one count per query whichever instance answered.
struct routed_answers {
  std::uint64_t success = 0, none_found = 0, fake_opponent = 0, invalid_request = 0;
  // Supervisors only: queries that reached an instance that was down and were
  // passed on to the next one, and those left with nobody to answer (an error).
  std::uint64_t passed_on = 0, unanswered = 0;

  void count(match_type t) {
    switch (t) {
      case match_type::success:
        ++success;
        break;
      case match_type::none_found:
        ++none_found;
        break;
      case match_type::fake_opponent:
        ++fake_opponent;
        break;
      case match_type::invalid_request:
        ++invalid_request;
        break;
    }
  }
  routed_answers& operator+=(const routed_answers& o) {
    success += o.success;
    none_found += o.none_found;
    fake_opponent += o.fake_opponent;
    invalid_request += o.invalid_request;
    passed_on += o.passed_on;
    unanswered += o.unanswered;
    return *this;
  }
};

// An instance actor's own counters: its scans and snapshots. The actor keeps
// them in this one struct and reports it as is.
struct instance_counters {
  std::uint64_t state_bytes = 0;           // size of the last snapshot written
  std::int64_t last_snapshot_unix_ms = 0;  // 0: none yet
  std::uint64_t scan_errors = 0;           // scans that failed (database errors)
  std::vector<std::string> scan_reports;   // latest unreadable-row explanations
  // The scans applied: rows asked for and rows found (a table smaller than the
  // fetch count, or a shard with few players, finds fewer), and their time.
  double last_scan_seconds = 0;
  std::int64_t last_scan_unix_ms = 0;  // when the last scan was applied; 0: none yet
  // Since when it serves what it should (GET /readyz): its snapshot restored,
  // or its first scan applied (at once without scans); 0: not yet.
  std::int64_t ready_unix_ms = 0;
  std::uint32_t last_scan_requested = 0, last_scan_found = 0;
  double scan_seconds_total = 0;
  std::uint64_t scan_rows_requested_total = 0, scan_rows_found_total = 0;
  // Snapshots written: encoding here plus the worker's transaction.
  double last_snapshot_seconds = 0;
  std::uint64_t snapshots_written = 0;
  std::uint64_t snapshot_failures = 0;  // snapshots encoded but not written (the database refused)
  routed_answers routed;                // routed queries this instance gave the final answer to
};

// A supervisor's counters: restarts of its instance after a crash, updates
// that arrived while it was down, and routed queries it answered or passed on
// then.
struct supervisor_counters {
  std::uint32_t restarts = 0;
  std::uint64_t updates_dropped = 0;
  routed_answers routed;
};

// What an instance reports about itself: the engine's view, its own counters,
// and those of the supervisor in front of it (zero from a bare instance).
struct instance_info {
  engine_info engine;
  instance_counters instance;
  supervisor_counters supervisor;
};

// What the routing client actor passed on. It never sees the answers (the
// instances send them straight to the caller): those are counted where they
// are given (routed_answers).
struct client_stats {
  std::uint64_t queries = 0;
  std::uint64_t updates = 0;
  std::uint64_t updates_elsewhere = 0;  // for players of shards another node runs: dropped
  routed_answers batches;  // the answers to the queries of batches (the client gathers those)
  // Single queries a cluster client sent together, as batches of its own
  // (query_coalescer.hpp): how many such batches, and the queries in them.
  std::uint64_t coalesced_batches = 0;
  std::uint64_t coalesced_queries = 0;
  // Updates in batches of more than max_batch_updates: dropped, not applied.
  std::uint64_t updates_refused = 0;
  // Updates a cluster client sent together, per node, as batches of its own:
  // how many such batches, and the updates in them.
  std::uint64_t coalesced_update_batches = 0;
  std::uint64_t coalesced_updates = 0;
};

// What a server serves now (its answer to shards_atom): the async shards by
// index of the set, and whether it runs the session queues. A cluster client
// routes updates and session requests by it.
struct served_resources {
  std::vector<std::uint32_t> shards;
  bool sessions = false;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, served_resources& x) {
  return f(caf::meta::type_name("served_resources"), x.shards, x.sessions);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, generic_model& x) {
  return f(caf::meta::type_name("generic_model"), x.id_low, x.id_high, x.mmr, x.attributes);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, generic_query& x) {
  return f(caf::meta::type_name("generic_query"), x.attacker, x.mmr, x.attributes);
}

template <class Inspector, class Query>
typename Inspector::result_type inspect(Inspector& f, match_request<Query>& x) {
  return f(caf::meta::type_name("match_request"), x.query, x.num_retries, x.excluded_player_ids,
           x.allow_fake_opponent);
}

template <class Inspector, class Model>
typename Inspector::result_type inspect(Inspector& f, match_reply<Model>& x) {
  return f(caf::meta::type_name("match_reply"), x.type, x.best_candidate_id, x.has_model, x.model,
           x.quality, x.players_tested, x.error);
}

template <class Inspector, class Model>
typename Inspector::result_type inspect(Inspector& f, player_update<Model>& x) {
  return f(caf::meta::type_name("player_update"), x.id, x.models);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, bucket_info& x) {
  return f(caf::meta::type_name("bucket_info"), x.index, x.labels, x.mmr_low, x.mmr_high, x.count,
           x.capacity, x.fill);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, engine_stats& x) {
  return f(caf::meta::type_name("engine_stats"), x.queries_success, x.queries_none_found,
           x.queries_fake, x.queries_invalid, x.updates_inserted, x.updates_updated,
           x.updates_bucket_changed, x.updates_removed, x.updates_no_op, x.updates_rejected,
           x.evictions, x.inserts_refused_capacity, x.removed_after_offer, x.scans, x.rows_applied,
           x.rows_malformed, x.samples_taken, x.rebalances, x.players_lost_in_rebalance,
           x.mmr_gap_counts, x.mmr_gap_sum);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, engine_info& x) {
  return f(caf::meta::type_name("engine_info"), x.name, x.players, x.capacity, x.overall_fill,
           x.bucket_count, x.buckets, x.mmr_low, x.mmr_high, x.samples, x.enough_data_for_rebalance,
           x.last_rebalance_unix_ms, x.memory_bytes, x.stats, x.row_reports);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, instance_counters& x) {
  return f(caf::meta::type_name("instance_counters"), x.state_bytes, x.last_snapshot_unix_ms,
           x.scan_errors, x.scan_reports, x.last_scan_seconds, x.last_scan_unix_ms, x.ready_unix_ms,
           x.last_scan_requested, x.last_scan_found, x.scan_seconds_total,
           x.scan_rows_requested_total, x.scan_rows_found_total, x.last_snapshot_seconds,
           x.snapshots_written, x.snapshot_failures, x.routed);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, set_route& x) {
  return f(caf::meta::type_name("set_route"), x.hops_left, x.fake_allowed, x.someone_said_none);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, routed_answers& x) {
  return f(caf::meta::type_name("routed_answers"), x.success, x.none_found, x.fake_opponent,
           x.invalid_request, x.passed_on, x.unanswered);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, supervisor_counters& x) {
  return f(caf::meta::type_name("supervisor_counters"), x.restarts, x.updates_dropped, x.routed);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, instance_info& x) {
  return f(caf::meta::type_name("instance_info"), x.engine, x.instance, x.supervisor);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, client_stats& x) {
  return f(caf::meta::type_name("client_stats"), x.queries, x.updates, x.updates_elsewhere,
           x.batches, x.coalesced_batches, x.coalesced_queries, x.updates_refused,
           x.coalesced_update_batches, x.coalesced_updates);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, query_try& x) {
  return f(caf::meta::type_name("query_try"), x.retries, x.type, x.best_candidate_id, x.quality,
           x.mmr_gap, x.players_tested, x.possible);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, rejected_candidate& x) {
  return f(caf::meta::type_name("rejected_candidate"), x.id, x.mmr, x.bucket, x.reason);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, query_explanation& x) {
  return f(caf::meta::type_name("query_explanation"), x.error, x.tries, x.rejected,
           x.players_cached, x.buckets_walked, x.buckets_never_walked, x.excluded_seen);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, player_info& x) {
  return f(caf::meta::type_name("player_info"), x.participating, x.mmr, x.percentile, x.buckets);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, rebalance_report& x) {
  return f(caf::meta::type_name("rebalance_report"), x.performed, x.reason, x.mmr_range_changed,
           x.mmr_low, x.mmr_high, x.samples, x.buckets_before, x.buckets_after, x.buckets_resized,
           x.buckets_pruned, x.players_before, x.players_after, x.players_lost, x.capacity_after);
}

}  // namespace mm
