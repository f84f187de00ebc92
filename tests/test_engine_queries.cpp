#include <catch2/catch.hpp>
#include <map>
#include <set>

#include "mm/engine/synthetic_players.hpp"
#include "test_support.hpp"

using namespace mm;
using namespace mm::test;

namespace {

// A random generic profile: each attribute gets a random rule and bucketing.
generic_profile_config random_profile(rng& r) {
  generic_profile_config c;
  const char* names[] = {"a0", "a1", "a2", "a3"};
  const auto n = r.below(5);
  for (std::size_t i = 0; i < n; ++i) {
    generic_attribute a;
    a.name = names[i];
    a.rule = static_cast<attribute_rule>(r.below(5));
    a.weight = static_cast<float>(r.below(41)) - 20;
    a.bucketing = static_cast<attribute_bucketing>(r.below(4));
    a.tier_width = 1 + static_cast<std::int64_t>(r.below(3));
    c.attributes.push_back(a);
  }
  c.mmr_window = static_cast<float>(r.below(400));
  c.mmr_window_per_retry = static_cast<float>(r.below(100));
  c.mmr_window_max = c.mmr_window + static_cast<float>(r.below(1000));
  return c;
}

std::array<std::uint32_t, 4> random_attributes(rng& r) {
  return {static_cast<std::uint32_t>(r.below(3)), static_cast<std::uint32_t>(r.below(4)),
          static_cast<std::uint32_t>(r.below(5)), static_cast<std::uint32_t>(r.below(7))};
}

struct scenario {
  options opts;
  generic_profile_config profile;
  std::vector<generic_model> players;
};

scenario random_scenario(std::uint64_t seed, bool exhaustive) {
  rng r(seed);
  scenario s;
  s.opts = small_options(static_cast<std::uint32_t>(50 + r.below(1500)));
  s.opts.random_seed = seed + 1;
  s.opts.mmr_bucket_count = static_cast<std::uint32_t>(1 + r.below(30));
  s.opts.bucket_initial_size = static_cast<std::uint32_t>(1 + r.below(s.opts.player_cache_size));
  s.opts.bucket_min_size = 1;
  s.opts.enable_fake_opponents = r.below(2) == 0;
  s.opts.player_remove_after_candidate_offer = static_cast<fill_threshold>(r.below(4));
  if (exhaustive) {
    s.opts.matching_candidate_amount = 1'000'000;
    s.opts.matching_max_search = 1'000'000;
  } else {
    s.opts.matching_max_search = static_cast<std::uint32_t>(1 + r.below(60));
    s.opts.matching_candidate_amount =
        static_cast<std::uint32_t>(1 + r.below(s.opts.matching_max_search));
  }
  s.profile = random_profile(r);
  const auto n = 1 + r.below(2 * s.opts.player_cache_size);
  for (std::size_t i = 0; i < n; ++i)
    s.players.push_back(
        model(1 + r.below(3 * n), static_cast<float>(r.below(2000)), random_attributes(r)));
  return s;
}

void fill(generic_engine& e, const scenario& s, rng& r) {
  for (const auto& m : s.players) e.add_sample(m);
  if (r.below(2) == 0) e.rebalance(1);
  for (const auto& m : s.players) e.update(m.id(), m);
}

match_request<generic_query> random_request(const generic_engine& e, rng& r) {
  match_request<generic_query> req;
  req.query =
      query(1 + r.below(5000), static_cast<float>(r.below(2400)) - 200, random_attributes(r));
  req.num_retries = static_cast<std::uint32_t>(r.below(4));
  const auto all = cached(e);
  if (!all.empty()) {
    // Sometimes the attacker is a cached player; exclude a few cached ids.
    if (r.below(3) == 0) req.query.attacker = all[r.below(all.size())].id();
    for (auto k = r.below(6); k > 0; --k)
      req.excluded_player_ids.push_back(all[r.below(all.size())].id());
  }
  if (r.below(4) == 0) {  // a long list: exercises the hashed exclusion set
    for (int k = 0; k < 40; ++k) req.excluded_player_ids.push_back(1 + r.below(6000));
  }
  return req;
}

// Checks that hold whatever the limits are.
void check_response(const generic_engine& e, const std::vector<generic_model>& before,
                    const match_request<generic_query>& req,
                    const match_response<generic_model>& res, const oracle_result& o) {
  REQUIRE(res.type != match_type::invalid_request);
  if (res.type == match_type::success) {
    auto it = std::find_if(before.begin(), before.end(),
                           [&](const generic_model& m) { return m.id() == res.best_candidate_id; });
    REQUIRE(it != before.end());  // a cached player
    CHECK(res.best_candidate_id != req.query.attacker);
    CHECK(std::find(req.excluded_player_ids.begin(), req.excluded_player_ids.end(),
                    res.best_candidate_id) == req.excluded_player_ids.end());
    REQUIRE(res.model.has_value());
    const auto v = e.profile().match(req.query, *res.model, req.num_retries);
    CHECK(v.possible);
    CHECK(v.quality == res.quality);
    // Never across a hard label: the oracle, which applies them, lists it.
    CHECK(std::any_of(o.possible.begin(), o.possible.end(),
                      [&](const auto& p) { return p.first == res.best_candidate_id; }));
  } else if (res.type == match_type::fake_opponent) {
    CHECK(e.opts().enable_fake_opponents);
  } else {
    CHECK(res.type == match_type::none_found);
  }
  // NoneFound or FakeOpponent with limits: either the oracle has none or the
  // search limit was reached.
  if (res.type != match_type::success && !o.possible.empty())
    CHECK(res.players_tested == e.opts().matching_max_search);
}

// Runs 20 random queries on each of `scenarios` random engines, checking every
// response against the oracle, then `extra` on it.
template <class Extra>
void run_property(std::uint64_t first_seed, int scenarios, bool exhaustive, Extra extra) {
  for (std::uint64_t seed = first_seed; seed < first_seed + scenarios; ++seed) {
    INFO("seed " << seed);
    const scenario s = random_scenario(seed, exhaustive);
    generic_engine e(s.opts, generic_profile(s.profile));
    rng r(seed * 7);
    fill(e, s, r);
    for (int qn = 0; qn < 20; ++qn) {
      const auto req = random_request(e, r);
      const auto before = cached(e);
      const oracle_result o = oracle(e, req);
      const auto res = e.find_match(req);
      check_response(e, before, req, res, o);
      extra(e, res, o);
    }
  }
}

}  // namespace

TEST_CASE("with limits at least the cache size, the engine finds the oracle's best",
          "[query][property]") {
  run_property(1, 150, /*exhaustive=*/true,
               [](const generic_engine& e, const auto& res, const oracle_result& o) {
                 if (o.best) {
                   REQUIRE(res.type == match_type::success);
                   CHECK(res.quality == *o.best);
                 } else {
                   CHECK(res.type == (e.opts().enable_fake_opponents ? match_type::fake_opponent
                                                                     : match_type::none_found));
                 }
               });
}

TEST_CASE("with search limits, answers are still valid candidates", "[query][property]") {
  run_property(1000, 150, /*exhaustive=*/false,
               [](const generic_engine& e, const auto& res, const oracle_result&) {
                 CHECK(res.players_tested <= e.opts().matching_max_search);
               });
}

TEST_CASE("the winner is removed after the offer only above the threshold", "[query]") {
  for (auto t : {fill_threshold::always, fill_threshold::never}) {
    auto o = small_options(100);
    o.player_remove_after_candidate_offer = t;
    generic_engine e(o);
    e.update(7, model(7, 500));
    match_request<generic_query> req;
    req.query = query(1, 500);
    const auto res = e.find_match(req);
    REQUIRE(res.type == match_type::success);
    CHECK(res.best_candidate_id == 7);
    CHECK(e.player(7).participating == (t == fill_threshold::never));
  }
}

TEST_CASE("queries on an empty engine and bad queries", "[query]") {
  auto o = small_options();
  generic_engine e(o);
  match_request<generic_query> req;
  req.query = query(1, 100);
  CHECK(e.find_match(req).type == match_type::none_found);

  req.query = query(0, 100);
  auto bad = e.find_match(req);
  CHECK(bad.type == match_type::invalid_request);
  CHECK_FALSE(bad.error.empty());

  req.query = query(1, std::numeric_limits<float>::quiet_NaN());
  CHECK(e.find_match(req).type == match_type::invalid_request);
  req.query = query(1, std::numeric_limits<float>::infinity());
  CHECK(e.find_match(req).type == match_type::invalid_request);

  o.max_excluded_ids = 10;
  generic_engine limited(o);
  req.query = query(1, 100);
  req.excluded_player_ids.assign(11, 5);
  CHECK(limited.find_match(req).type == match_type::invalid_request);
  CHECK(limited.stats().queries_invalid == 1);
}

TEST_CASE("the model is returned only when return_model_in_response is on", "[query]") {
  auto o = small_options();
  o.return_model_in_response = false;
  o.player_remove_after_candidate_offer = fill_threshold::never;
  generic_engine e(o);
  e.update(3, model(3, 10));
  match_request<generic_query> req;
  req.query = query(1, 10);
  auto res = e.find_match(req);
  CHECK(res.type == match_type::success);
  CHECK(res.best_candidate_id == 3);
  CHECK_FALSE(res.model.has_value());
}

TEST_CASE("fake opponents answer when nothing is possible", "[query]") {
  auto o = small_options();
  o.enable_fake_opponents = true;
  generic_engine e(o);
  e.update(3, model(3, 900));  // outside the default window of 100
  match_request<generic_query> req;
  req.query = query(1, 10, {1, 2, 3, 4});
  auto res = e.find_match(req);
  REQUIRE(res.type == match_type::fake_opponent);
  REQUIRE(res.model);
  CHECK(res.model->mmr == 10);
  CHECK(res.best_candidate_id == invalid_player);
  // A retry widens the window: 100 + 50 * 20 = 1100 (capped by the max of 1000).
  req.num_retries = 20;
  CHECK(e.find_match(req).type == match_type::success);
}

TEST_CASE("a request that allows no fake opponent gets NoneFound instead", "[query]") {
  auto o = small_options();
  o.enable_fake_opponents = true;
  generic_engine e(o);
  e.update(3, model(3, 900));
  match_request<generic_query> req;
  req.query = query(1, 10);
  req.allow_fake_opponent = false;  // what an instance set asks of all but its last instance
  CHECK(e.find_match(req).type == match_type::none_found);
  CHECK(e.stats().queries_fake == 0);
  req.allow_fake_opponent = true;
  CHECK(e.find_match(req).type == match_type::fake_opponent);
}

TEST_CASE("a million excluded ids are honoured", "[query]") {
  auto o = small_options(2000);
  o.player_remove_after_candidate_offer = fill_threshold::never;
  generic_engine e(o);
  for (player_id id = 1; id <= 1000; ++id) e.update(id, model(id, 500));
  match_request<generic_query> req;
  req.query = query(5000, 500);
  req.excluded_player_ids.resize(1'000'000);
  for (std::size_t i = 0; i < req.excluded_player_ids.size(); ++i)
    req.excluded_player_ids[i] = 2 + i;  // everyone but player 1
  auto res = e.find_match(req);
  if (e.player(1).participating) {
    REQUIRE(res.type == match_type::success);
    CHECK(res.best_candidate_id == 1);
  } else {
    CHECK(res.type == match_type::none_found);
  }
}

TEST_CASE("queries see both sides of a bucket border", "[query]") {
  // A query just above a border: its own slice holds only farther players, the
  // slice below as many nearer ones. Testing two players, the merged walk takes
  // each from either side by its share (half and half here), so three queries
  // in four have seen one from below, where the best one is.
  auto o = small_options(1000);
  o.mmr_bucket_count = 10;  // slices of 100 over [0, 1000]
  o.matching_candidate_amount = 2;
  o.matching_max_search = 2;
  o.player_remove_after_candidate_offer = fill_threshold::never;
  generic_engine e(o);
  for (player_id id = 1; id <= 20; ++id) e.update(id, model(id, 499.5f));
  for (player_id id = 21; id <= 40; ++id) e.update(id, model(id, 505));
  const auto below = e.info().buckets[0].count, above = e.info().buckets[1].count;
  int saw_below = 0;
  const int queries = 400;
  for (int i = 0; i < queries; ++i) {
    match_request<generic_query> req;
    req.query = query(100, 500.5f);
    auto res = e.find_match(req);
    REQUIRE(res.type == match_type::success);
    CHECK(res.players_tested == 2);
    saw_below += res.best_candidate_id <= 20;  // the nearer side wins whenever it was seen
  }
  const double share_above = static_cast<double>(above) / (below + above);
  const double expected = 1 - share_above * share_above;  // about 3/4
  CHECK(static_cast<double>(saw_below) / queries == Approx(expected).margin(0.1));
}

namespace {
// Every candidate equally good, and the order the engine asked about them.
struct recording_profile : generic_profile {
  static inline std::vector<player_id>* asked = nullptr;
  static inline bool decline_fakes = false;
  match_verdict match(const generic_query&, const generic_model& m, std::uint32_t) const {
    if (asked) asked->push_back(m.id());
    return match_verdict::with_quality(1.0f);
  }
  std::optional<generic_model> fake_opponent(const generic_query& q) const {
    if (decline_fakes) return std::nullopt;
    return generic_profile::fake_opponent(q);
  }
  std::vector<std::unique_ptr<strategy<recording_profile>>> make_strategies() const { return {}; }
};
static_assert(game_profile<recording_profile>);
}  // namespace

TEST_CASE("the walk stops after matching_candidate_amount possible candidates", "[query]") {
  for (std::uint32_t amount : {1u, 3u, 10u}) {
    auto o = small_options();
    o.matching_candidate_amount = amount;
    o.player_remove_after_candidate_offer = fill_threshold::never;
    engine<recording_profile> e(o);
    for (player_id id = 1; id <= 200; ++id) e.update(id, model(id, 500));
    std::vector<player_id> asked;
    recording_profile::asked = &asked;
    const auto res = e.find_match({query(9999, 500), 0, {}});
    recording_profile::asked = nullptr;
    CHECK(res.type == match_type::success);
    CHECK(res.players_tested == amount);
    CHECK(asked.size() == amount);
  }
}

TEST_CASE("among equally good candidates the first one seen wins", "[query]") {
  auto o = small_options();
  o.player_remove_after_candidate_offer = fill_threshold::never;
  engine<recording_profile> e(o);
  for (player_id id = 1; id <= 200; ++id) e.update(id, model(id, 500));
  std::set<player_id> winners;
  for (int q = 0; q < 50; ++q) {
    std::vector<player_id> asked;
    recording_profile::asked = &asked;
    const auto res = e.find_match({query(9999, 500), 0, {}});
    recording_profile::asked = nullptr;
    REQUIRE_FALSE(asked.empty());
    CHECK(res.best_candidate_id == asked.front());
    winners.insert(res.best_candidate_id);
  }
  CHECK(winners.size() > 20);  // and the first seen is random, not always the same one
}

TEST_CASE("by default the winner leaves the cache only when its bucket is 80% full", "[query]") {
  auto o = small_options();
  o.mmr_bucket_count = 1;
  o.bucket_initial_size = 10;
  REQUIRE(o.player_remove_after_candidate_offer == fill_threshold::high_population);
  generic_engine sparse(o);
  sparse.enroll(model(1, 500));
  const auto kept = sparse.find_match({query(9999, 500), 0, {}});
  REQUIRE(kept.type == match_type::success);
  CHECK(sparse.player(1).participating);  // 10% full: stays
  CHECK(sparse.stats().removed_after_offer == 0);

  generic_engine full(o);
  for (player_id id = 1; id <= 200 && full.info().players < 9; ++id) full.enroll(model(id, 500));
  REQUIRE(full.info().players == 9);  // 90% full
  const auto taken = full.find_match({query(9999, 500), 0, {}});
  REQUIRE(taken.type == match_type::success);
  CHECK_FALSE(full.player(taken.best_candidate_id).participating);
  CHECK(full.stats().removed_after_offer == 1);
}

TEST_CASE("a fake-opponent factory that declines gives NoneFound", "[query]") {
  auto o = small_options();
  o.enable_fake_opponents = true;
  engine<recording_profile> e(o);
  recording_profile::decline_fakes = true;
  const auto declined = e.find_match({query(9999, 500), 0, {}});  // an empty cache
  recording_profile::decline_fakes = false;
  CHECK(declined.type == match_type::none_found);
  CHECK(e.find_match({query(9999, 500), 0, {}}).type == match_type::fake_opponent);
}

// A 12-player bucket beside a 2,000-player one, every candidate as good: the
// first player seen (the winner on a tie) comes from the small bucket about as
// often as a uniform choice over both would pick one of its players, not half
// the time as strict lane alternation would give.
TEST_CASE("the two lanes merge in proportion to the players each bucket holds", "[query]") {
  auto o = small_options(10'000);
  o.bucket_initial_size = 4096;
  o.player_remove_after_candidate_offer = fill_threshold::never;
  engine<recording_profile> e(o);  // MMR slices of 100 over [0, 1000]
  for (player_id id = 1; id <= 12; ++id) e.enroll(model(id, 150));
  for (player_id id = 1000; id < 3000; ++id) e.enroll(model(id, 250));
  const double small = static_cast<double>(e.info().buckets[0].count);
  const double large = static_cast<double>(e.info().buckets[1].count);
  REQUIRE(e.info().bucket_count == 2);
  int from_small = 0;
  const int queries = 4000;
  for (int q = 0; q < queries; ++q) {
    const auto res = e.find_match({query(9999, 150), 0, {}});
    REQUIRE(res.type == match_type::success);
    from_small += res.best_candidate_id < 1000;
  }
  const double uniform = small / (small + large);  // about 0.6%
  CHECK(from_small > 0);
  CHECK(static_cast<double>(from_small) / queries < 3 * uniform);
}
