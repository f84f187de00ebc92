#include <catch2/catch.hpp>
#include <cmath>
#include <numeric>

#include "test_support.hpp"

using namespace mm;
using namespace mm::test;

TEST_CASE("info counts what the buckets hold", "[introspection]") {
  auto o = small_options(1000);
  o.mmr_bucket_count = 10;
  generic_engine e(o);
  for (player_id id = 1; id <= 50; ++id) e.update(id, model(id, static_cast<float>(id * 10)));
  const auto info = e.info();
  CHECK(info.name == o.name);
  std::uint64_t players = 0, capacity = 0;
  for (const auto& b : info.buckets) {
    players += b.count;
    capacity += b.capacity;
    CHECK(b.fill == Approx(static_cast<double>(b.count) / b.capacity));
    CHECK(b.labels.size() == 1);
    CHECK(b.mmr_high - b.mmr_low == Approx(100));
  }
  CHECK(players == info.players);
  CHECK(capacity == info.capacity);
  CHECK(info.players == cached(e).size());
  CHECK(info.bucket_count == info.buckets.size());
  CHECK(info.overall_fill == Approx(static_cast<double>(players) / capacity));
  CHECK(info.memory_bytes >= capacity * sizeof(generic_model));
  CHECK_FALSE(info.enough_data_for_rebalance);
}

TEST_CASE("player info: participation, MMR, percentile, buckets", "[introspection]") {
  auto o = small_options(10'000);
  o.bucket_initial_size = 5000;
  generic_engine e(o);
  for (player_id id = 1; id <= 100; ++id) e.update(id, model(id, static_cast<float>(id)));
  const auto all = cached(e);
  const auto p = e.player(50);
  if (!p.participating) return;  // evicted by a collision: nothing to compare
  CHECK(p.mmr == 50);
  const auto below =
      std::count_if(all.begin(), all.end(), [](const generic_model& m) { return m.mmr <= 50; });
  CHECK(p.percentile == Approx(static_cast<double>(below) / all.size()));
  REQUIRE(p.buckets.size() == 1);
  CHECK(e.inspect_bucket(p.buckets[0], 0, 10'000).size() > 0);
  CHECK_FALSE(e.player(100'000).participating);
  CHECK_FALSE(e.player(0).participating);
}

TEST_CASE("inspect bucket pages by MMR descending, top N matches a full sort", "[introspection]") {
  auto o = small_options(10'000);
  o.mmr_bucket_count = 1;
  o.bucket_initial_size = 5000;
  generic_engine e(o);
  rng r(3);
  for (player_id id = 1; id <= 1000; ++id)
    e.update(id, model(id, static_cast<float>(r.below(500))));
  auto all = cached(e);
  std::sort(all.begin(), all.end(),
            [](auto& a, auto& b) { return a.mmr != b.mmr ? a.mmr > b.mmr : a.id() < b.id(); });
  std::vector<generic_model> paged;
  for (std::uint32_t off = 0;; off += 37) {
    auto page = e.inspect_bucket(0, off, 37);
    if (page.empty()) break;
    CHECK(page.size() <= 37);
    paged.insert(paged.end(), page.begin(), page.end());
  }
  REQUIRE(paged.size() == all.size());
  for (std::size_t i = 0; i < all.size(); ++i) CHECK(paged[i].id() == all[i].id());
  CHECK(e.inspect_bucket(5, 0, 10).empty());  // unknown bucket

  const auto top = e.top_by_mmr(100);
  REQUIRE(top.size() == 100);
  for (std::size_t i = 0; i < top.size(); ++i) CHECK(top[i].id() == all[i].id());
  CHECK(e.top_by_mmr(100'000).size() == all.size());
}

TEST_CASE("the snapshot sample is proportional to bucket counts", "[introspection]") {
  auto o = small_options(100'000);
  o.mmr_bucket_count = 4;  // slices of 250
  o.bucket_initial_size = 50'000;
  generic_engine e(o);
  // Three quarters of the players in slice 0, a quarter in slice 3.
  for (player_id id = 1; id <= 3000; ++id) e.update(id, model(id, 10));
  for (player_id id = 3001; id <= 4000; ++id) e.update(id, model(id, 900));
  const auto info = e.info();
  const auto sample = e.proportional_sample(400);
  CHECK(sample.size() <= 400);
  CHECK(sample.size() >= 398);
  const auto low = std::count_if(sample.begin(), sample.end(),
                                 [](const generic_model& m) { return m.mmr < 500; });
  double low_share = 0;
  for (const auto& b : info.buckets)
    if (b.mmr_low < 500) low_share += static_cast<double>(b.count) / info.players;
  CHECK(static_cast<double>(low) / sample.size() == Approx(low_share).margin(0.01));
  CHECK(e.proportional_sample(1'000'000).size() == info.players);
  CHECK(e.proportional_sample(0).empty());
}

TEST_CASE("clear empties the cache and keeps sizing", "[introspection]") {
  auto o = small_options(1000);
  generic_engine e(o);
  for (int i = 0; i < 2000; ++i) e.add_sample(model(1, static_cast<float>(i % 500)));
  e.rebalance(7);
  for (player_id id = 1; id <= 100; ++id) e.update(id, model(id, 100));
  e.clear();
  CHECK(e.info().players == 0);
  CHECK(e.last_rebalance_unix_ms() == 7);
  CHECK_FALSE(e.sizing().empty());
  CHECK(e.update(1, model(1, 100)).outcome == update_outcome::inserted);
}

TEST_CASE("the MMR-gap histogram counts every Success once, in its slot", "[introspection]") {
  auto o = small_options(1000);
  o.player_remove_after_candidate_offer = fill_threshold::never;
  generic_engine e(o, generic_profile(generic_profile_config{{}, 1000, 0, 1000}));
  e.update(1, model(1, 500));
  std::uint64_t successes = 0;
  double sum = 0;
  std::vector<std::uint64_t> expected(mmr_gap_bounds.size() + 1);
  for (float attack : {500.0f, 503.0f, 530.0f, 900.0f, 1400.0f}) {
    const auto r = e.find_match({query(99, attack), 0, {}});
    REQUIRE(r.type == match_type::success);
    ++successes;
    sum += std::abs(attack - 500.0);
    ++expected[mmr_gap_slot(std::abs(attack - 500.0))];
  }
  const auto& s = e.stats();
  CHECK(s.mmr_gap_counts == expected);
  CHECK(s.mmr_gap_sum == Approx(sum));
  CHECK(expected[0] == 2);                  // gaps 0 and 3 are <= 5
  CHECK(expected[mmr_gap_slot(400)] == 1);  // 400 is on its bound
  CHECK(std::accumulate(expected.begin(), expected.end(), std::uint64_t{0}) == successes);
}

TEST_CASE("explain tries retries until Success and says why candidates were rejected",
          "[introspection]") {
  generic_profile_config pc;
  pc.attributes = {{"region", attribute_rule::hard_equal, 0, attribute_bucketing::none, 1},
                   {"guild", attribute_rule::must_differ, 0, attribute_bucketing::none, 1}};
  pc.mmr_window = 100;
  pc.mmr_window_per_retry = 50;
  pc.mmr_window_max = 1000;
  auto o = small_options(1000);
  o.mmr_bucket_count = 1;
  generic_engine e(o, generic_profile(pc));
  e.update(2, model(2, 1000, {1, 7}));  // same guild as the attacker
  e.update(3, model(3, 1010, {2, 0}));  // another region
  e.update(4, model(4, 1020, {1, 0}));  // excluded by the request
  e.update(5, model(5, 1260, {1, 0}));  // possible from retry 4 (window 300)
  const auto before = e.stats();
  const auto x = e.explain({query(1, 1000, {1, 7}), 0, {4}});
  REQUIRE(x.error.empty());
  REQUIRE(x.tries.size() == 5);
  for (std::size_t r = 0; r < 4; ++r) CHECK(x.tries[r].type == match_type::none_found);
  CHECK(x.tries[4].type == match_type::success);
  CHECK(x.tries[4].best_candidate_id == 5);
  CHECK(x.tries[4].mmr_gap == Approx(260));
  REQUIRE(x.rejected.size() == 3);
  CHECK(x.rejected[0].id == 2);
  CHECK(x.rejected[0].reason == "same 'guild' (7) and it must differ");
  CHECK(x.rejected[1].id == 3);
  CHECK(x.rejected[1].reason == "'region' differs (2, the attacker's is 1) and must be equal");
  CHECK(x.rejected[2].id == 4);
  CHECK(x.rejected[2].reason == "excluded by the request");
  CHECK(x.players_cached == 4);
  // Nothing changed: no statistics, the winner is still cached.
  CHECK(e.stats().queries_success == before.queries_success);
  CHECK(e.player(5).participating);

  const auto none = e.explain({query(1, 5000, {1, 7}), 0, {}}, 2);
  REQUIRE(none.tries.size() == 3);
  CHECK(none.tries.back().type == match_type::none_found);
  REQUIRE_FALSE(none.rejected.empty());
  CHECK(none.rejected[0].id == 5);
  CHECK(none.rejected[0].reason == "MMR gap 3740 is wider than the window 200 at retry 2");

  CHECK(e.explain({query(0, 1000), 0, {}}).error == "attacker id 0 is invalid");
  CHECK(e.explain({query(1, std::nanf("")), 0, {}}).error == "attack MMR is not finite");
}

TEST_CASE("explain counts the buckets a hard label keeps out", "[introspection]") {
  generic_profile_config pc;
  pc.attributes = {
      {"region", attribute_rule::hard_equal, 0, attribute_bucketing::distinct_hard, 1}};
  generic_engine e(small_options(1000), generic_profile(pc));
  e.update(2, model(2, 500, {1}));
  e.update(3, model(3, 500, {2}));
  e.update(4, model(4, 500, {3}));
  const auto x = e.explain({query(1, 500, {1}), 0, {}});
  REQUIRE(x.tries.size() == 1);
  CHECK(x.tries[0].best_candidate_id == 2);
  CHECK(x.buckets_walked == 1);
  CHECK(x.buckets_never_walked == 2);
}

TEST_CASE("explain changes nothing: the queries after it go as they would have",
          "[introspection]") {
  // Two engines with the same seed and players; one is asked to explain
  // between its queries. Every later answer must be the same in both: the
  // walk's random choices (bucket ties, slot starts, lane picks) come from the
  // engine's generator, which explain must leave untouched.
  auto o = small_options(4000);
  o.bucket_initial_size = 400;
  o.matching_candidate_amount = 3;
  generic_engine plain(o), explained(o);
  for (player_id id = 1; id <= 3000; ++id) {
    const auto m = model(id, static_cast<float>(1000 + (id * 7919) % 2000));
    plain.update(id, m);
    explained.update(id, m);
  }
  for (player_id attacker = 1; attacker <= 200; ++attacker) {
    match_request<generic_query> req;
    req.query = query(attacker, static_cast<float>(900 + attacker * 11));
    const auto why = explained.explain(req, 3);
    CHECK_FALSE(why.tries.empty());
    const auto a = plain.find_match(req);
    const auto b = explained.find_match(req);
    REQUIRE(a.type == b.type);
    REQUIRE(a.best_candidate_id == b.best_candidate_id);
  }
  CHECK(plain.stats().queries_success == explained.stats().queries_success);
}
