// Every message that crosses the network or an actor boundary goes through
// CAF's binary serializer and comes back with every field: a field left out of
// an inspect() would arrive with its default value on another machine.
#include <caf/all.hpp>
#include <catch2/catch.hpp>

#include "actor_fixture.hpp"
#include "mm/actors/db_worker.hpp"
#include "mm/actors/interface.hpp"
#include "test_support.hpp"

using namespace mm;

namespace {
template <class T>
T round_trip(caf::actor_system& sys, T x) {
  std::vector<char> buf;
  caf::binary_serializer sink{sys, buf};
  REQUIRE_FALSE(sink(x));
  T y{};
  caf::binary_deserializer source{sys, buf};
  REQUIRE_FALSE(source(y));
  return y;
}

generic_model some_model() {
  return generic_model{0x1'0000'0002ull, 1234.5f, {1, 2, 3, 4}};
}

bool same(const generic_model& a, const generic_model& b) {
  return a.id() == b.id() && a.mmr == b.mmr && a.attributes == b.attributes;
}
}  // namespace

TEST_CASE("every message type survives the binary serializer", "[actors][messages]") {
  test::actor_fixture f;
  auto& sys = f.sys();

  match_request<generic_query> req;
  req.query = generic_query{77, 1500.25f, {5, 6, 7, 8}};
  req.num_retries = 3;
  req.excluded_player_ids = {1, 2, 0xffff'ffff'ffffull};
  req.allow_fake_opponent = false;
  const auto req2 = round_trip(sys, req);
  CHECK(req2.query.attacker == 77);
  CHECK(req2.query.mmr == 1500.25f);
  CHECK(req2.query.attributes == req.query.attributes);
  CHECK(req2.num_retries == 3);
  CHECK(req2.excluded_player_ids == req.excluded_player_ids);
  CHECK(req2.allow_fake_opponent == false);

  match_reply<generic_model> rep;
  rep.type = match_type::fake_opponent;
  rep.best_candidate_id = 99;
  rep.has_model = true;
  rep.model = some_model();
  rep.quality = 2.5f;
  rep.players_tested = 17;
  rep.error = "why";
  const auto rep2 = round_trip(sys, rep);
  CHECK(rep2.type == rep.type);
  CHECK(rep2.best_candidate_id == 99);
  CHECK(rep2.has_model);
  CHECK(same(rep2.model, rep.model));
  CHECK(rep2.quality == 2.5f);
  CHECK(rep2.players_tested == 17);
  CHECK(rep2.error == "why");

  player_update<generic_model> up{0x1'0000'0002ull, {some_model(), some_model()}};
  const auto up2 = round_trip(sys, up);
  CHECK(up2.id == up.id);
  REQUIRE(up2.models.size() == 2);
  CHECK(same(up2.models[1], up.models[1]));

  instance_info info;
  info.engine.name = "mm-3";
  info.engine.players = 11;
  info.engine.capacity = 12;
  info.engine.overall_fill = 0.5;
  info.engine.bucket_count = 1;
  info.engine.buckets = {bucket_info{4, {"mmr#2", "region=1"}, 10, 20, 5, 6, 0.75}};
  info.engine.mmr_low = -3;
  info.engine.mmr_high = 3000;
  info.engine.samples = 13;
  info.engine.enough_data_for_rebalance = true;
  info.engine.last_rebalance_unix_ms = 14;
  info.engine.memory_bytes = 15;
  auto& s = info.engine.stats;
  s.queries_success = 1, s.queries_none_found = 2, s.queries_fake = 3, s.queries_invalid = 4;
  s.updates_inserted = 5, s.updates_updated = 6, s.updates_bucket_changed = 7;
  s.updates_removed = 8, s.updates_no_op = 9, s.updates_rejected = 10;
  s.evictions = 11, s.inserts_refused_capacity = 12, s.removed_after_offer = 13;
  s.scans = 14, s.rows_applied = 15, s.rows_malformed = 16, s.samples_taken = 17;
  s.rebalances = 18, s.players_lost_in_rebalance = 19;
  s.mmr_gap_counts.back() = 20;
  s.mmr_gap_sum = 21.5;
  info.instance.state_bytes = 22;
  info.instance.last_snapshot_unix_ms = 23;
  info.instance.scan_errors = 24;
  info.instance.scan_reports = {"row 1: bad"};
  info.instance.last_scan_seconds = 0.25;
  info.instance.last_scan_requested = 25, info.instance.last_scan_found = 26;
  info.instance.scan_seconds_total = 27.5;
  info.instance.scan_rows_requested_total = 28, info.instance.scan_rows_found_total = 29;
  info.instance.last_snapshot_seconds = 0.5;
  info.instance.snapshots_written = 30;
  info.supervisor.restarts = 31;
  info.supervisor.updates_dropped = 32;
  const auto info2 = round_trip(sys, info);
  const auto& e2 = info2.engine;
  CHECK(e2.name == "mm-3");
  CHECK(e2.players == 11);
  CHECK(e2.capacity == 12);
  CHECK(e2.overall_fill == 0.5);
  CHECK(e2.bucket_count == 1);
  REQUIRE(e2.buckets.size() == 1);
  CHECK(e2.buckets[0].index == 4);
  CHECK(e2.buckets[0].labels == info.engine.buckets[0].labels);
  CHECK(e2.buckets[0].mmr_low == 10);
  CHECK(e2.buckets[0].mmr_high == 20);
  CHECK(e2.buckets[0].count == 5);
  CHECK(e2.buckets[0].capacity == 6);
  CHECK(e2.buckets[0].fill == 0.75);
  CHECK(e2.mmr_low == -3);
  CHECK(e2.mmr_high == 3000);
  CHECK(e2.samples == 13);
  CHECK(e2.enough_data_for_rebalance);
  CHECK(e2.last_rebalance_unix_ms == 14);
  CHECK(e2.memory_bytes == 15);
  const auto& s2 = e2.stats;
  CHECK(std::vector<std::uint64_t>{
            s2.queries_success, s2.queries_none_found, s2.queries_fake, s2.queries_invalid,
            s2.updates_inserted, s2.updates_updated, s2.updates_bucket_changed, s2.updates_removed,
            s2.updates_no_op, s2.updates_rejected, s2.evictions, s2.inserts_refused_capacity,
            s2.removed_after_offer, s2.scans, s2.rows_applied, s2.rows_malformed, s2.samples_taken,
            s2.rebalances, s2.players_lost_in_rebalance} ==
        std::vector<std::uint64_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18,
                                   19});
  CHECK(s2.mmr_gap_counts == s.mmr_gap_counts);
  CHECK(s2.mmr_gap_sum == 21.5);
  CHECK(info2.instance.state_bytes == 22);
  CHECK(info2.instance.last_snapshot_unix_ms == 23);
  CHECK(info2.instance.scan_errors == 24);
  CHECK(info2.instance.scan_reports == info.instance.scan_reports);
  CHECK(info2.instance.last_scan_seconds == 0.25);
  CHECK(info2.instance.last_scan_requested == 25);
  CHECK(info2.instance.last_scan_found == 26);
  CHECK(info2.instance.scan_seconds_total == 27.5);
  CHECK(info2.instance.scan_rows_requested_total == 28);
  CHECK(info2.instance.scan_rows_found_total == 29);
  CHECK(info2.instance.last_snapshot_seconds == 0.5);
  CHECK(info2.instance.snapshots_written == 30);
  CHECK(info2.supervisor.restarts == 31);
  CHECK(info2.supervisor.updates_dropped == 32);

  player_info p{true, 1200, 0.75, {1, 4}};
  const auto p2 = round_trip(sys, p);
  CHECK(p2.participating);
  CHECK(p2.mmr == 1200);
  CHECK(p2.percentile == 0.75);
  CHECK(p2.buckets == p.buckets);

  rebalance_report r;
  r.performed = true, r.reason = "x", r.mmr_range_changed = true, r.mmr_low = 1, r.mmr_high = 2;
  r.samples = 3, r.buckets_before = 4, r.buckets_after = 5, r.buckets_resized = 6;
  r.buckets_pruned = 7, r.players_before = 8, r.players_after = 9, r.players_lost = 10;
  r.capacity_after = 11;
  const auto r2 = round_trip(sys, r);
  CHECK(r2.performed);
  CHECK(r2.reason == "x");
  CHECK(r2.mmr_range_changed);
  CHECK(std::vector<double>{
            r2.mmr_low, r2.mmr_high, double(r2.samples), double(r2.buckets_before),
            double(r2.buckets_after), double(r2.buckets_resized), double(r2.buckets_pruned),
            double(r2.players_before), double(r2.players_after), double(r2.players_lost),
            double(r2.capacity_after)} == std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});

  query_explanation x;
  x.error = "e";
  x.tries = {query_try{2, match_type::success, 5, 1.5f, 3.5, 6, 7}};
  x.rejected = {rejected_candidate{8, 9.5, 10, "far"}};
  x.players_cached = 11, x.buckets_walked = 12, x.buckets_never_walked = 13, x.excluded_seen = 14;
  const auto x2 = round_trip(sys, x);
  CHECK(x2.error == "e");
  REQUIRE(x2.tries.size() == 1);
  const auto& t = x2.tries[0];
  CHECK((t.retries == 2 && t.type == match_type::success && t.best_candidate_id == 5 &&
         t.quality == 1.5f && t.mmr_gap == 3.5 && t.players_tested == 6 && t.possible == 7));
  REQUIRE(x2.rejected.size() == 1);
  CHECK((x2.rejected[0].id == 8 && x2.rejected[0].mmr == 9.5 && x2.rejected[0].bucket == 10 &&
         x2.rejected[0].reason == "far"));
  CHECK((x2.players_cached == 11 && x2.buckets_walked == 12 && x2.buckets_never_walked == 13 &&
         x2.excluded_seen == 14));

  // Between an instance and its database worker.
  player_row row;
  row.id = 5, row.mmr = 1.25, row.attributes = {1, -2, 3, 4}, row.payload = std::string("\0p", 2);
  row.is_bot = true, row.updated_at_unix_ms = 6;
  scan_result scan;
  scan.rows = {row};
  scan.unreadable = 7, scan.reports = {"r"}, scan.batches = 8, scan.wraps = 9, scan.seconds = 0.5;
  const auto scan2 = round_trip(sys, scan);
  REQUIRE(scan2.rows.size() == 1);
  const auto& row2 = scan2.rows[0];
  CHECK((row2.id == 5 && row2.mmr == 1.25 && row2.attributes == row.attributes &&
         row2.payload == row.payload && row2.is_bot && row2.updated_at_unix_ms == 6));
  CHECK((scan2.unreadable == 7 && scan2.reports == scan.reports && scan2.batches == 8 &&
         scan2.wraps == 9 && scan2.seconds == 0.5));
  stored_state st{1, 2, std::string("MMSS\0x", 6)};
  const auto st2 = round_trip(sys, st);
  CHECK((st2.persisted_at_unix_ms == 1 && st2.payload_version == 2 && st2.payload == st.payload));
}
