// The dashboard in a real browser: Debian's headless Chromium, driven through
// chromedriver's W3C WebDriver protocol (plain HTTP + JSON), against a live
// matchmakerd. It checks that the page shows the server's live data and that
// its forms work.
#include <filesystem>

#include "browser.hpp"
#include "server_fixture.hpp"

using namespace mm;
using namespace mm::test;

TEST_CASE("the dashboard shows live data and its forms work in headless Chromium",
          "[server][browser]") {
  INFO("needs Debian's chromium and chromium-driver (./run test installs them)");
  REQUIRE(std::filesystem::exists(chromium_path));
  REQUIRE(std::filesystem::exists(chromedriver_path));
  live_server s(json{{"demo", {{"queries_per_second", 100}}}});
  s.wait_until_filled();
  browser b(s.dir());
  b.open(s.url() + "/");

  // Without a token the API refuses and the page says so.
  CHECK(b.wait_for("document.getElementById('status').textContent.includes('valid token')"));
  b.type("#token", test_token);
  b.script("document.getElementById('token').dispatchEvent(new Event('change'));");

  // A card per matchmaker, with the players the API reports.
  REQUIRE(b.wait_for("document.querySelectorAll('#cards .card[data-players]').length === 2"));
  const json cards = b.script(
      "return [...document.querySelectorAll('#cards .card')].map(c => "
      "({name: c.dataset.name, players: Number(c.dataset.players)}));");
  const json api = s.get_json("/api/matchmakers", view_token)["matchmakers"];
  for (std::size_t i = 0; i < 2; ++i) {
    CHECK(cards[i]["name"] == api[i]["name"]);
    CHECK(cards[i]["players"].get<double>() > 0);
    // The page polled a moment ago. The cache moves both ways meanwhile (the
    // scan fills it, offers under the built-in load take winners out, an early
    // rebalance resizes): the same order of magnitude, not the same number.
    const double page = cards[i]["players"].get<double>(), now = api[i]["players"].get<double>();
    CHECK(page <= now * 2);
    CHECK(page >= now / 2);
  }

  // Charts: bucket fill across MMR and the MMR distribution have bars; the
  // request chart shows the built-in load (100 queries/s) as a rate above 0.
  CHECK(b.wait_for("document.querySelectorAll('#fill-chart rect.bar').length > 10"));
  CHECK(b.wait_for("document.querySelectorAll('#mmr-chart rect.bar').length > 10"));
  CHECK(b.script("return [...document.querySelectorAll('#mmr-chart rect.bar')]"
                 ".reduce((s, r) => s + Number(r.dataset.value), 0);")
            .get<double>() > 0);
  CHECK(
      b.wait_for("Number(document.getElementById('rate-value').textContent.replace(/,/"
                 "g, '')) > 0"));
  CHECK(b.wait_for("document.querySelector('#mix [data-result=success]') !== null"));

  // The test-query form: region 1, attack MMR 1500: Success, with the tries.
  b.type("#test-form input[name=mmr]", "1500");
  b.type("#test-form input[name=attr-region]", "1");
  b.click("#test-submit");
  REQUIRE(b.wait_for("document.getElementById('test-summary') !== null"));
  const std::string summary =
      b.script("return document.getElementById('test-summary').textContent;");
  CHECK(summary.find("Success on mm-") == 0);
  CHECK(b.script("return document.querySelectorAll('#test-result table tbody tr').length;")
            .get<int>() >= 2);

  // An impossible query explains itself.
  b.type("#test-form input[name=mmr]", "90000000");
  b.type("#test-form input[name=max_retries]", "2");
  b.click("#test-submit");
  REQUIRE(
      b.wait_for("document.getElementById('test-summary') && "
                 "document.getElementById('test-summary').textContent.includes('no "
                 "possible candidate')"));
  CHECK(
      b.wait_for("document.getElementById('test-result').textContent.includes('is "
                 "wider than the window')"));

  // The bucket inspector lists a bucket's players, highest MMR first.
  REQUIRE(b.wait_for("document.querySelectorAll('#inspect-bucket option').length > 0"));
  b.script(
      "const s = document.getElementById('inspect-bucket');"
      "s.value = [...s.options].sort((a, b) => Number(b.text.match(/\\((\\d+)\\//)[1]) "
      "- "
      "Number(a.text.match(/\\((\\d+)\\//)[1]))[0].value;");
  b.click("#inspect-submit");
  REQUIRE(b.wait_for("document.querySelectorAll('#inspector-rows tr').length > 0"));
  const json mmrs = b.script(
      "return [...document.querySelectorAll('#inspector-rows tr')].map(r => "
      "Number(r.children[1].textContent.replace(/,/g, '')));");
  for (std::size_t i = 1; i < mmrs.size(); ++i)
    CHECK(mmrs[i - 1].get<double>() >= mmrs[i].get<double>());

  b.screenshot(s.dir().file("dashboard.png"));
  if (const char* keep = std::getenv("MM_DASHBOARD_SCREENSHOT"))
    std::filesystem::copy_file(s.dir().file("dashboard.png"), keep,
                               std::filesystem::copy_options::overwrite_existing);
}

TEST_CASE(
    "the sessions page shows live queues, stages, time to match, lobbies and backfill in "
    "headless Chromium",
    "[server][browser][session]") {
  REQUIRE(std::filesystem::exists(chromium_path));
  REQUIRE(std::filesystem::exists(chromedriver_path));
  // The demo's stream of joining players feeds a co-op queue over two datacenters.
  const json dcs = {{{"name", "paris"}, {"latitude", 48.9}, {"longitude", 2.4}},
                    {{"name", "tokyo"}, {"latitude", 35.7}, {"longitude", 139.7}}};
  live_server s(json{{"demo", {{"session_players_per_second", 40}}},
                     {"sessions",
                      {{"datacenters", dcs},
                       {"wait_reasons_every", "1s"},
                       {"queues",
                        {{{"name", "coop"},
                          {"min_players", 4},
                          {"max_players", 4},
                          {"teams", 0},
                          {"max_party_size", 4},
                          {"tick", "200ms"},
                          {"latency", {{"ideal_ms", 50}}}},
                         {{"name", "duel"}}}}}}},
                100);
  s.post_json("/api/lobbies",
              {{"id", "ctf-1"},
               {"mode", "ctf"},
               {"datacenter", "paris"},
               {"max_players", 10},
               {"players", 4}},
              admin_token, 201);
  browser b(s.dir());
  b.open(s.url() + "/sessions.html");
  b.type("#token", view_token);
  b.script("document.getElementById('token').dispatchEvent(new Event('change'));");

  // A card per queue; the co-op queue's matches climb as players join.
  REQUIRE(b.wait_for("document.querySelectorAll('#queue-cards .card').length === 2"));
  REQUIRE(b.wait_for(
      "Number(document.querySelector('#queue-cards .card[data-queue=coop]').dataset.matches) > 0"));
  const json api = s.get_json("/api/queues", view_token)["queues"];
  const double page_matches = b.script(
      "return Number(document.querySelector('#queue-cards .card[data-queue=coop]')"
      ".dataset.matches);");
  CHECK(page_matches > 0);
  CHECK(page_matches <= api[0]["matches"].get<double>());  // the page polled a moment ago

  // Time to match and worst RTT over the last polls: points once matches
  // formed between two polls; the RTT of a player placed near a datacenter.
  REQUIRE(b.wait_for("document.querySelectorAll('#ttm-chart circle.point').length > 0"));
  REQUIRE(b.wait_for("document.querySelectorAll('#rtt-chart circle.point').length > 0"));
  const json rtts = b.script(
      "return [...document.querySelectorAll('#rtt-chart circle.point')]"
      ".map(c => Number(c.dataset.value));");
  for (const auto& r : rtts) {
    CHECK(r.get<double>() >= 0);
    CHECK(r.get<double>() < 1000);
  }
  // Waiting tickets by stage: one bar per queue and stage, the counts the API gives.
  CHECK(b.script("return document.querySelectorAll('#stage-chart rect').length;").get<int>() == 6);
  // Lobbies by datacenter.
  REQUIRE(b.wait_for("document.querySelector('#lobby-rows tr[data-datacenter=paris]') !== null"));
  CHECK(b.script("return document.querySelector('#lobby-rows tr[data-datacenter=paris]')"
                 ".children[2].textContent;") == "4");
  // The chosen queue's waiting tickets, oldest first.
  CHECK(b.wait_for("document.getElementById('waiting-queue').textContent === 'coop'"));
  // Why tickets wait: the co-op queue's sampled reasons, as the API counts them.
  REQUIRE(b.wait_for(
      "document.querySelectorAll('#reason-rows tr[data-queue=coop] .reason').length > 0"));
  const json reasons = s.get_json("/api/queues", view_token)["queues"][0]["wait_reasons"];
  const json shown = b.script(
      "return [...document.querySelectorAll('#reason-rows tr[data-queue=coop] .reason')]"
      ".map(r => r.dataset.reason);");
  for (const auto& r : shown) CHECK(reasons.contains(r.get<std::string>()));
  // Backfill: a running match of two players at paris gets players from the
  // demo's stream; the card counts them and an admin's token lists the match.
  const json near_paris = {{"paris", 10}, {"tokyo", 240}};
  s.post_json("/api/backfills",
              {{"queue", "coop"},
               {"match_id", "m-1"},
               {"datacenter", "paris"},
               {"teams",
                {{{{"id", 900001}, {"mmr", 1500}, {"rtt_ms", near_paris}},
                  {{"id", 900002}, {"mmr", 1500}, {"rtt_ms", near_paris}}}}}},
              admin_token, 201);
  REQUIRE(
      b.wait_for("Number(document.querySelector('#queue-cards .card[data-queue=coop]')"
                 ".dataset.backfilled) > 0"));
  CHECK(b.script("return document.querySelectorAll('#backfill-rows tr').length;") == 0);
  b.script("document.getElementById('token').value = '" + admin_token +
           "'; document.getElementById('token').dispatchEvent(new Event('change'));");
  REQUIRE(b.wait_for("document.querySelector('#backfill-rows tr[data-match=m-1]') !== null"));
  CHECK(b.script("return document.querySelector('#backfill-rows tr[data-match=m-1]')"
                 ".children[2].textContent;") == "paris");
  CHECK_THAT(
      b.script("return document.getElementById('backfill-count').textContent;").get<std::string>(),
      Catch::Matchers::StartsWith("1 running"));
  b.screenshot(s.dir().file("sessions.png"));
  if (const char* keep = std::getenv("MM_SESSIONS_SCREENSHOT"))
    std::filesystem::copy_file(s.dir().file("sessions.png"), keep,
                               std::filesystem::copy_options::overwrite_existing);
}

TEST_CASE(
    "the configuration page replays a candidate beside the version in force before its apply "
    "button shows, applies it and rolls it back, in headless Chromium",
    "[server][browser][live_config]") {
  REQUIRE(std::filesystem::exists(chromium_path));
  REQUIRE(std::filesystem::exists(chromedriver_path));
  // The demo's stream of players into a recorded co-op queue.
  temp_dir rec;
  live_server s(json{{"demo", {{"session_players_per_second", 40}}},
                     {"sessions",
                      {{"datacenters",
                        {{{"name", "paris"}, {"latitude", 48.9}, {"longitude", 2.4}},
                         {{"name", "tokyo"}, {"latitude", 35.7}, {"longitude", 139.7}}}},
                       {"record", {{"queues", {"coop"}}, {"dir", rec.file("recordings")}}},
                       {"queues",
                        {{{"name", "coop"},
                          {"min_players", 4},
                          {"max_players", 4},
                          {"teams", 0},
                          {"max_party_size", 4},
                          {"tick", "200ms"},
                          {"latency", {{"ideal_ms", 50}}}}}}}}},
                100);
  // Some matches recorded first (polling the process).
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (s.get_json("/api/queues", view_token)["queues"][0]["matches"] < 5 &&
         std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  browser b(s.dir());
  b.open(s.url() + "/config.html");
  b.script("document.getElementById('token').value = '" + admin_token +
           "'; document.getElementById('token').dispatchEvent(new Event('change'));");
  REQUIRE(b.wait_for("document.getElementById('version').textContent === '1'"));
  REQUIRE(b.wait_for("document.getElementById('candidate').value.includes('coop')"));
  CHECK(b.script("return document.getElementById('apply-form').hidden;") == true);

  // The candidate: a wider latency ideal. Replayed first: the two columns.
  b.script(
      "const t = document.getElementById('candidate'); const d = JSON.parse(t.value);"
      "d.queues[0].latency.ideal_ms = 80; t.value = JSON.stringify(d, null, 2);"
      "t.dispatchEvent(new Event('input'));");
  b.click("#dry-run");
  const bool replayed = b.wait_for("!document.getElementById('compare').hidden");
  INFO(b.script("return document.getElementById('candidate-result').textContent;").dump());
  REQUIRE(replayed);
  CHECK(b.script("return document.querySelectorAll('#compare-rows tr').length;") == 7);
  const json tickets = b.script(
      "return [...document.querySelectorAll('#compare-rows tr[data-figure=tickets] td')]"
      ".map(td => td.textContent);");
  REQUIRE(tickets.size() == 3);
  CHECK(tickets[1] == tickets[2]);  // the same recorded tickets on both sides
  CHECK(tickets[1] != "0");
  CHECK(b.script("return document.getElementById('apply-form').hidden;") == false);

  b.type("#comment", "wider ideal");
  b.click("#apply");
  REQUIRE(b.wait_for("document.getElementById('version').textContent === '2'"));
  const json now = s.get_json("/api/admin/config/sessions", view_token);
  CHECK(now["comment"] == "wider ideal");
  CHECK(now["document"]["queues"][0]["latency"]["ideal_ms"] == 80);
  REQUIRE(b.wait_for("document.querySelectorAll('#history-rows tr').length === 2"));
  b.click("#history-rows tr[data-version='1'] button.rollback");
  REQUIRE(b.wait_for("document.getElementById('version').textContent === '3'"));
  CHECK(s.get_json("/api/admin/config/sessions",
                   view_token)["document"]["queues"][0]["latency"]["ideal_ms"] == 50);
  // The async profile's: checked and applied the same way (no recording to replay).
  b.script(
      "const s = document.getElementById('scope'); s.value = 'profile';"
      "s.dispatchEvent(new Event('change'));");
  REQUIRE(b.wait_for("document.getElementById('candidate').value.includes('mmr_window')"));
  CHECK(b.script("return document.getElementById('dry-run').hidden;") == true);
  b.script(
      "const t = document.getElementById('candidate'); const d = JSON.parse(t.value);"
      "d.mmr_window = 150; t.value = JSON.stringify(d, null, 2); t.dispatchEvent(new "
      "Event('input'));");
  b.click("#check");
  REQUIRE(b.wait_for("!document.getElementById('apply-form').hidden"));
  b.click("#apply");
  REQUIRE(b.wait_for("document.getElementById('version').textContent === '2'"));
  CHECK(s.get_json("/api/admin/config/profile", view_token)["document"]["mmr_window"] == 150);
  b.screenshot(s.dir().file("config.png"));
  if (const char* keep = std::getenv("MM_CONFIG_SCREENSHOT"))
    std::filesystem::copy_file(s.dir().file("config.png"), keep,
                               std::filesystem::copy_options::overwrite_existing);
}
