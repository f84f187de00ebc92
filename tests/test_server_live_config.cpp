// The session queues' configuration changed while the real matchmakerd runs
// (docs/operations.md, "Changing the configuration while it runs"): a new
// skill rule applied over HTTP under ticket load (none lost; the next tick
// runs it, as explain shows), rolled back; checked before it is applied;
// refused when it would strand waiting tickets unless forced; kept across a
// restart.
#include <atomic>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>

#include "session_http.hpp"

using namespace mm::test;

namespace {

json duel_with_skill(double max_difference) {
  json patch = session_patch();
  json queues = patch["sessions"]["queues"];
  queues[0]["give_up_after"] = "60s";
  queues[0]["rules"][0]["max_difference"] = max_difference;
  return {{"queues", queues}};
}

json server_patch() {
  json patch = session_patch();
  patch["sessions"]["queues"][0]["give_up_after"] = "60s";
  return patch;
}

double skill_threshold(const live_server& s, const std::string& ticket) {
  const json why = s.get_json("/api/tickets/" + ticket + "/explain", test_token);
  REQUIRE(why.contains("queues"));
  REQUIRE_FALSE(why["queues"].empty());
  for (const auto& r : why["queues"][0]["rules"])
    if (r["name"] == "skill") return r["threshold"].get<double>();
  FAIL("no skill rule in " << why.dump());
  return 0;
}

std::string state_of(const live_server& s, const std::string& ticket) {
  return s.get_json("/api/tickets/" + ticket, test_token)["state"].get<std::string>();
}

bool reaches(const live_server& s, const std::string& ticket, const std::string& state) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    if (state_of(s, ticket) == state) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

// Solo tickets into the duel from players 100000 on, MMR 1000 to 1399,
// until stopped; the ids acknowledged (201).
class ticket_load {
 public:
  explicit ticket_load(const live_server& s)
      : thread_([this, port = s.port()] {
          httplib::Client c("127.0.0.1", port);
          c.set_read_timeout(std::chrono::seconds(30));
          for (std::uint64_t player = 100'000; !stop_; ++player) {
            const json body = solo("duel", player, 1000 + static_cast<double>(player % 400));
            auto r = c.Post("/api/tickets", {{"Authorization", "Bearer " + test_token}},
                            body.dump(), "application/json");
            std::lock_guard lock(mutex_);
            if (r && r->status == 201)
              acknowledged_.push_back(json::parse(r->body)["ticket"].get<std::string>());
            else
              ++refused_;
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
          }
        }) {}
  ~ticket_load() { finish(); }
  std::vector<std::string> finish() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    std::lock_guard lock(mutex_);
    return acknowledged_;
  }
  std::size_t refused() {
    std::lock_guard lock(mutex_);
    return refused_;
  }

 private:
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::vector<std::string> acknowledged_;
  std::size_t refused_ = 0;
  std::thread thread_;
};

}  // namespace

TEST_CASE(
    "live config: a new skill rule applied over HTTP under ticket load holds from the next tick, "
    "loses no ticket, and a rollback restores it",
    "[server][live_config]") {
  live_server s(server_patch());
  const json first = s.get_json("/api/admin/config/sessions", view_token);
  CHECK(first["version"] == 1);
  CHECK(first["applied_version"] == 1);
  CHECK(first["author"] == "file");
  // The document in its full form, every key with its value.
  CHECK(first["document"]["queues"][0]["rules"][0]["max_difference"] == 100);
  CHECK(first["document"]["queues"][1]["name"] == "coop");

  ticket_load load(s);
  // Two players far above the load, 450 apart: the duel's 100 keeps them apart.
  const std::string a = create(s, solo("duel", 1, 5000));
  const std::string b = create(s, solo("duel", 2, 5450));
  // Far from everyone: waits under either rule, for explain to show it.
  const std::string alone = create(s, solo("duel", 5, 20000));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  CHECK(state_of(s, a) == "waiting");
  CHECK(skill_threshold(s, a) == 100);

  // Checked first: the diff, nothing stranded, nothing changed yet.
  const json checked = s.post_json("/api/admin/config/sessions/check",
                                   {{"document", duel_with_skill(600)}}, admin_token);
  CHECK(checked["valid"] == true);
  CHECK(checked["diff"] ==
        json::array(
            {{{"key", "queues.duel.rules.skill.max_difference"}, {"from", 100}, {"to", 600}}}));
  CHECK(checked["stranded"]["tickets"] == 0);
  CHECK(s.get_json("/api/admin/config/sessions", view_token)["version"] == 1);

  const json applied = s.post_json("/api/admin/config/sessions",
                                   {{"document", duel_with_skill(600)},
                                    {"comment", "wider on a quiet night"},
                                    {"base_version", 1}},
                                   admin_token);
  CHECK(applied["version"] == 2);
  CHECK(applied["queues_changed"] == 1);
  // The queue took it at once; its next tick matches the pair.
  CHECK(skill_threshold(s, alone) == 600);
  CHECK(reaches(s, a, "matched"));
  CHECK(reaches(s, b, "matched"));

  const json back = s.post_json("/api/admin/config/sessions/rollback",
                                {{"version", 1}, {"comment", "too wide"}}, admin_token);
  CHECK(back["version"] == 3);
  const std::string c = create(s, solo("duel", 3, 7000));
  CHECK(skill_threshold(s, c) == 100);

  // Every acknowledged ticket of the load is known: waiting or finished.
  const auto acknowledged = load.finish();
  CHECK(acknowledged.size() > 50);
  CHECK(load.refused() == 0);
  for (const auto& id : acknowledged) {
    const auto r = s.get("/api/tickets/" + id, test_token);
    REQUIRE(r);
    CHECK(r->status == 200);
  }

  const json history = s.get_json("/api/admin/config/sessions/versions?limit=10", view_token);
  REQUIRE(history["versions"].size() == 3);
  CHECK(history["versions"][0]["author"] == "ops");
  CHECK(history["versions"][0]["comment"] == "too wide");
  CHECK(history["versions"][1]["comment"] == "wider on a quiet night");
  CHECK(history["versions"][1]["diff"][0]["to"] == 600);
  CHECK(history["versions"][2]["author"] == "file");

  // A restart starts from the version in force, not the file's.
  REQUIRE(s.post_json("/api/admin/config/sessions", {{"document", duel_with_skill(300)}},
                      admin_token)["version"] == 4);
  CHECK(s.stop() == 0);
  s.restart(server_patch());
  const json after = s.get_json("/api/admin/config/sessions", view_token);
  CHECK(after["version"] == 4);
  CHECK(after["applied_version"] == 4);
  const std::string d = create(s, solo("duel", 4, 9000));
  CHECK(skill_threshold(s, d) == 300);
}

TEST_CASE(
    "live config: a bad document is a 400 naming the key, a change that strands tickets is "
    "refused unless forced, and only an admin may change",
    "[server][live_config]") {
  live_server s(server_patch());
  json bad = duel_with_skill(100);
  bad["queues"][0]["rules"][0]["max_difference"] = "wide";
  json no = s.post_json("/api/admin/config/sessions/check", {{"document", bad}}, admin_token, 400);
  CHECK(no["error"].get<std::string>().find("max_difference") != std::string::npos);
  no = s.post_json("/api/admin/config/sessions", {{"document", bad}}, admin_token, 400);
  CHECK(no["error"].get<std::string>().find("sessions.queues") != std::string::npos);
  s.post_json("/api/admin/config/sessions", {{"document", duel_with_skill(600)}}, test_token, 403);
  s.post_json("/api/admin/config/sessions", {{"comment", "no document"}}, admin_token, 400);
  s.post_json("/api/admin/config/sessions",
              {{"document", duel_with_skill(600)}, {"base_version", 7}}, admin_token, 409);
  s.post_json("/api/admin/config/sessions/rollback", {{"version", 99}}, admin_token, 404);

  // A party of three waits in the co-op queue; a max_party_size of 2 strands it.
  json party = {{"queue", "coop"}, {"players", json::array()}};
  for (std::uint64_t p = 1; p <= 3; ++p)
    party["players"].push_back({{"id", p}, {"mmr", 1000}, {"rtt_ms", {{"paris", 20}}}});
  const std::string trio = create(s, party);
  json smaller = duel_with_skill(100);
  smaller["queues"][1]["max_party_size"] = 2;
  const json checked =
      s.post_json("/api/admin/config/sessions/check", {{"document", smaller}}, admin_token);
  CHECK(checked["stranded"]["tickets"] == 1);
  CHECK(checked["stranded"]["queues"]["coop"]["no_longer_fit"] == 1);
  const json refused =
      s.post_json("/api/admin/config/sessions", {{"document", smaller}}, admin_token, 409);
  CHECK(refused["stranded"]["tickets"] == 1);
  CHECK(state_of(s, trio) == "waiting");
  s.post_json("/api/admin/config/sessions", {{"document", smaller}, {"force", true}}, admin_token);
  CHECK(reaches(s, trio, "failed"));

  // A queue left out is closed to new tickets.
  json duel_only = smaller;
  duel_only["queues"].erase(1);
  s.post_json("/api/admin/config/sessions", {{"document", duel_only}}, admin_token);
  const json closed = s.post_json("/api/tickets", solo("coop", 9, 1000), test_token, 400);
  CHECK(closed["error"].get<std::string>().find("closed") != std::string::npos);
}

TEST_CASE("mmctl: config show, check, apply, history and rollback",
          "[server][mmctl][live_config]") {
  live_server s(server_patch());
  const std::vector<std::pair<std::string, std::string>> env = {{"MMCTL_URL", s.url()},
                                                                {"MMCTL_TOKEN", admin_token}};
  const auto mmctl = [&](std::vector<std::string> args) {
    args.insert(args.begin(), MMCTL_BINARY);
    auto [status, out] = run_binary(args, env);
    INFO(out);
    const auto brace = out.find('{');
    return std::make_pair(status, brace == std::string::npos
                                      ? json(out)
                                      : json::parse(out.substr(brace), nullptr, false));
  };
  auto [shown, now] = mmctl({"config", "show"});
  CHECK(shown == 0);
  CHECK(now["version"] == 1);
  // A whole config file works too: its sessions.queues is the candidate.
  const std::string file = s.dir().file("wider.json");
  std::ofstream(file) << json{{"sessions", duel_with_skill(250)}}.dump();
  auto [checked, report] = mmctl({"config", "check", file});
  CHECK(checked == 0);
  CHECK(report["diff"][0]["to"] == 250);
  auto [applied, result] = mmctl({"config", "apply", file, "--comment", "by hand", "--base", "1"});
  CHECK(applied == 0);
  CHECK(result["version"] == 2);
  auto [listed, history] = mmctl({"config", "history", "--limit", "5"});
  CHECK(listed == 0);
  CHECK(history["versions"][0]["comment"] == "by hand");
  auto [rolled, back] = mmctl({"config", "rollback", "1", "--force"});
  CHECK(rolled == 0);
  CHECK(back["version"] == 3);
  auto [stale, why] = mmctl({"config", "apply", file, "--base", "1"});
  CHECK(stale == 1);
  CHECK(why.get<std::string>().find("HTTP 409") != std::string::npos);
  auto [bad, usage] = mmctl({"config", "apply"});
  CHECK(bad == 2);
  auto [profile_shown, profile] = mmctl({"config", "show", "--scope", "profile"});
  CHECK(profile_shown == 0);
  CHECK(profile["document"]["mmr_window"] == 100);
}

TEST_CASE(
    "live config: the profile's window holds from the next query, a bucketing change rebuilds "
    "the buckets, the attributes' names stay, and a restart keeps the version",
    "[server][live_config]") {
  const json patch = {{"demo", {{"queries_per_second", 0}}}};
  live_server s(patch);
  s.wait_until_filled();
  const json first = s.get_json("/api/admin/config/profile", view_token);
  CHECK(first["version"] == 1);
  CHECK(first["author"] == "file");
  const auto window_said = [&] {
    const json far =
        s.post_json("/api/test-query", {{"attacker_id", 999'999}, {"mmr", 1e7}, {"max_retries", 0}},
                    test_token);
    INFO(far.dump());
    REQUIRE(far.contains("matchmakers"));
    REQUIRE_FALSE(far["matchmakers"][0]["rejected"].empty());
    return far["matchmakers"][0]["rejected"][0]["reason"].get<std::string>();
  };
  CHECK_THAT(window_said(), Catch::Matchers::Contains("the window 100 at retry 0"));

  json wider = first["document"];
  wider["mmr_window"] = 300;
  const json checked =
      s.post_json("/api/admin/config/profile/check", {{"document", wider}}, admin_token);
  CHECK(checked["rebuild"] == false);
  CHECK(checked["diff"] == json::array({{{"key", "mmr_window"}, {"from", 100.0}, {"to", 300}}}));
  const json applied = s.post_json("/api/admin/config/profile",
                                   {{"document", wider}, {"comment", "wider"}}, admin_token);
  CHECK(applied["version"] == 2);
  CHECK(applied["rebuild"] == false);
  CHECK(applied["matchmakers_changed"] == 2);
  CHECK_THAT(window_said(), Catch::Matchers::Contains("the window 300 at retry 0"));
  CHECK(s.get_json("/api/config", view_token)["profile"]["mmr_window"] == 300);

  // A bucketing: said first, then the buckets start over and a scan refills them.
  json ranked = wider;
  ranked["attributes"][3]["bucketing"] = "ranged";
  ranked["attributes"][3]["tier_width"] = 2;
  const json rebuilds =
      s.post_json("/api/admin/config/profile/check", {{"document", ranked}}, admin_token);
  CHECK(rebuilds["rebuild"] == true);
  CHECK(rebuilds["rebuild_keys"] ==
        json({"attributes.league.bucketing", "attributes.league.tier_width"}));
  const json rebuilt =
      s.post_json("/api/admin/config/profile", {{"document", ranked}}, admin_token);
  CHECK(rebuilt["rebuild"] == true);
  s.wait_until_filled();
  CHECK_THAT(window_said(), Catch::Matchers::Contains("the window 300 at retry 0"));

  // The attributes' names stay (the table's columns follow them).
  json renamed = ranked;
  renamed["attributes"][0]["name"] = "realm";
  const json no =
      s.post_json("/api/admin/config/profile", {{"document", renamed}}, admin_token, 400);
  CHECK_THAT(no["error"].get<std::string>(), Catch::Matchers::Contains("names and order"));

  // A restart starts the matchmakers with the version in force.
  CHECK(s.stop() == 0);
  s.restart(patch);
  s.wait_until_filled();
  CHECK(s.get_json("/api/admin/config/profile", view_token)["applied_version"] == 3);
  CHECK_THAT(window_said(), Catch::Matchers::Contains("the window 300 at retry 0"));
  const json back =
      s.post_json("/api/admin/config/profile/rollback", {{"version", 1}}, admin_token);
  CHECK(back["rebuild"] == true);
  s.wait_until_filled();
  CHECK_THAT(window_said(), Catch::Matchers::Contains("the window 100 at retry 0"));
}
