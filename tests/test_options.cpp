#include <catch2/catch.hpp>

#include "mm/engine/options.hpp"
#include "test_support.hpp"

using namespace mm;

namespace {
bool mentions(const std::vector<std::string>& errors, const std::string& key) {
  for (auto& e : errors)
    if (e.find(key) != std::string::npos) return true;
  return false;
}
const profile_capabilities full{true, true};
}  // namespace

TEST_CASE("the defaults are the spec's and pass the checks", "[options]") {
  options o;
  CHECK(o.player_cache_size == 100'000);
  CHECK(o.database_cache_size == 16'000);
  CHECK(o.mmr_bucket_count == 100);
  CHECK(o.bucket_min_size == 20);
  CHECK(o.bucket_initial_size == 200);
  CHECK(o.buckets_rebalance_interval == std::chrono::hours(4));
  CHECK(o.buckets_rebalance_sample_count == 1'000'000);
  CHECK(o.database_scan_tick == std::chrono::seconds(30));
  CHECK(o.database_scan_first_delay == std::chrono::seconds(10));
  CHECK(o.database_scan_batch_size == 64);
  CHECK(o.database_scan_min_fetch == 64);
  CHECK(o.database_scan_max_fetch == 1024);
  CHECK(o.matching_candidate_amount == 10);
  CHECK(o.matching_max_search == 500);
  CHECK(o.initial_mmr_low == 0);
  CHECK(o.initial_mmr_high == 1000);
  CHECK(o.state_snapshot_interval == std::chrono::hours(1));
  CHECK(o.enable_database_scan);
  CHECK_FALSE(o.allow_multiple_entries_per_player);
  CHECK_FALSE(o.enable_fake_opponents);
  CHECK(o.return_model_in_response);
  CHECK(o.player_ignore_update_insert == fill_threshold::never);
  CHECK(o.player_remove_after_candidate_offer == fill_threshold::high_population);
  CHECK(check(o, {}).empty());
  CHECK_NOTHROW(validate(o, {}));
}

TEST_CASE("each inconsistent setting is named", "[options]") {
  struct bad_case {
    const char* key;
    void (*apply)(options&);
  };
  const bad_case cases[] = {
      {"player_cache_size", [](options& o) { o.player_cache_size = 0; }},
      {"mmr_bucket_count", [](options& o) { o.mmr_bucket_count = 0; }},
      {"bucket_min_size", [](options& o) { o.bucket_min_size = 0; }},
      {"bucket_min_size", [](options& o) { o.bucket_min_size = 300; }},
      {"bucket_initial_size", [](options& o) { o.bucket_initial_size = 200'000; }},
      {"database_cache_size", [](options& o) { o.database_cache_size = 200'000; }},
      {"database_scan_min_fetch", [](options& o) { o.database_scan_min_fetch = 2000; }},
      {"database_scan_batch_size", [](options& o) { o.database_scan_batch_size = 0; }},
      {"database_scan_tick", [](options& o) { o.database_scan_tick = {}; }},
      {"matching_candidate_amount", [](options& o) { o.matching_candidate_amount = 0; }},
      {"matching_candidate_amount", [](options& o) { o.matching_candidate_amount = 501; }},
      {"matching_max_search", [](options& o) { o.matching_max_search = 0; }},
      {"initial_mmr_low", [](options& o) { o.initial_mmr_low = 2000; }},
      {"initial_mmr_low", [](options& o) { o.initial_mmr_high = std::nan(""); }},
      {"mmr_range_low_percentile", [](options& o) { o.mmr_range_low_percentile = 0.7; }},
      {"buckets_rebalance_sample_count", [](options& o) { o.buckets_rebalance_sample_count = 0; }},
      {"state_snapshot_interval", [](options& o) { o.state_snapshot_interval = {}; }},
      {"enable_fake_opponents",
       [](options& o) {
         o.enable_fake_opponents = true;
         o.return_model_in_response = false;
       }},
      {"allow_multiple_entries_per_player",
       [](options& o) {
         o.allow_multiple_entries_per_player = true;
         o.return_model_in_response = false;
       }},
      {"player_ignore_update_insert",
       [](options& o) {
         o.allow_multiple_entries_per_player = true;
         o.enable_database_scan = false;
         o.player_ignore_update_insert = fill_threshold::high_population;
       }},
  };
  for (const auto& c : cases) {
    options o;
    c.apply(o);
    const auto errors = check(o, full);
    INFO(c.key);
    CHECK(mentions(errors, c.key));
    CHECK_THROWS_AS(validate(o, full), config_error);
  }
}

TEST_CASE("checks that depend on the game profile", "[options]") {
  options o;
  o.allow_multiple_entries_per_player = true;
  CHECK(mentions(check(o, {false, true}), "several models"));
  CHECK(check(o, {true, true}).empty());
  options f;
  f.enable_fake_opponents = true;
  CHECK(mentions(check(f, {true, false}), "fake opponent factory"));
  // The generic profile has one model per player.
  CHECK_THROWS_AS(generic_engine(o), config_error);
}

TEST_CASE("options at their limits build a working engine", "[options]") {
  options o;
  o.player_cache_size = 1;
  o.database_cache_size = 1;
  o.bucket_min_size = 1;
  o.bucket_initial_size = 1;
  o.mmr_bucket_count = 1;
  o.matching_candidate_amount = 1;
  o.matching_max_search = 1;
  o.buckets_rebalance_sample_count = 1;
  o.random_seed = 9;
  generic_engine e(o);
  e.update(1, test::model(1, 10));
  e.update(2, test::model(2, 10));
  CHECK(e.info().players == 1);
  match_request<generic_query> req;
  req.query = test::query(3, 10);
  CHECK(e.find_match(req).type == match_type::success);
  e.add_sample(test::model(1, 10));
  e.add_sample(test::model(2, 10));
  CHECK(e.rebalance(1).performed);
}

TEST_CASE("generic profile configuration checks", "[options][profile]") {
  generic_profile_config c;
  c.attributes.resize(5);
  for (std::size_t i = 0; i < 5; ++i) c.attributes[i].name = "a" + std::to_string(i);
  CHECK_THROWS_AS(generic_profile(c), config_error);
  c.attributes.resize(2);
  c.attributes[1].name = "a0";
  CHECK_THROWS_WITH(generic_profile(c), Catch::Contains("named twice"));
  c.attributes[1].name = "";
  CHECK_THROWS_WITH(generic_profile(c), Catch::Contains("has no name"));
  c.attributes[1].name = "a1";
  c.attributes[1].bucketing = attribute_bucketing::ranged;
  c.attributes[1].tier_width = 0;
  CHECK_THROWS_WITH(generic_profile(c), Catch::Contains("tier_width"));
  c.attributes[1].tier_width = 1;
  c.mmr_window_max = c.mmr_window - 1;
  CHECK_THROWS_AS(generic_profile(c), config_error);
  c.mmr_window_max = 1000;
  CHECK_NOTHROW(generic_profile(c));
  CHECK(parse_attribute_rule("must_differ") == attribute_rule::must_differ);
  CHECK_FALSE(parse_attribute_rule("sometimes").has_value());
  CHECK(parse_attribute_bucketing("ranged") == attribute_bucketing::ranged);
  CHECK(parse_fill_threshold("low_population") == fill_threshold::low_population);
  CHECK_FALSE(parse_fill_threshold("half").has_value());
}

TEST_CASE("the generic match rule", "[profile]") {
  generic_profile_config c;
  c.attributes = {{"region", attribute_rule::hard_equal, 0, attribute_bucketing::none, 1},
                  {"guild", attribute_rule::must_differ, 0, attribute_bucketing::none, 1},
                  {"hero", attribute_rule::prefer_different, 20, attribute_bucketing::none, 1},
                  {"league", attribute_rule::prefer_equal, 5, attribute_bucketing::none, 1}};
  generic_profile p(c);
  const auto q = test::query(1, 1000, {1, 7, 3, 2});
  CHECK_FALSE(p.match(q, test::model(2, 1000, {2, 8, 4, 2}), 0).possible);  // other region
  CHECK_FALSE(p.match(q, test::model(2, 1000, {1, 7, 4, 2}), 0).possible);  // own guild
  CHECK_FALSE(p.match(q, test::model(2, 1101, {1, 8, 4, 2}), 0).possible);  // window 100
  CHECK(p.match(q, test::model(2, 1101, {1, 8, 4, 2}), 1).possible);        // window 150
  const auto v = p.match(q, test::model(2, 1010, {1, 8, 4, 2}), 0);
  CHECK(v.possible);
  CHECK(v.quality == Approx(-10 + 20 + 5));
  CHECK(p.match(q, test::model(2, 1010, {1, 8, 3, 0}), 0).quality == Approx(-10));
  CHECK(p.window(1000) == 1000);
}
