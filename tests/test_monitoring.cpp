// The monitoring kit of deploy/ against the real things. promtool checks the
// rule files and runs their unit tests (each alert fires on made-up trouble).
// Then a real Prometheus (Debian's) scrapes a live matchmakerd, a node of a
// cluster on a PostgreSQL server the test starts, with the demo's query and
// session load, a lobby and a backfilled match; it loads the rules, and every
// expression of the rules and of the Grafana dashboard is evaluated there:
// each must return data. An alert's expression is evaluated as its signal
// (`SIGNAL OP bool THRESHOLD`), which returns data whether it fires or not.
#include <httplib.h>

#include <catch2/catch.hpp>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "mm/testing/postgres_server.hpp"
#include "server_fixture.hpp"

using namespace mm::test;
using json = nlohmann::json;
using namespace std::chrono_literals;

namespace {

const std::string deploy_dir = std::string(MM_SOURCE_DIR) + "/deploy";

// A program on PATH ("" when missing).
std::string on_path(const std::string& name) {
  std::istringstream dirs(getenv("PATH") ? getenv("PATH") : "");
  for (std::string d; std::getline(dirs, d, ':');)
    if (std::filesystem::exists(d + "/" + name)) return d + "/" + name;
  return {};
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// `expr` with its last top-level comparison given the `bool` modifier: the
// comparison then answers 0 or 1 for every series instead of filtering.
// Empty when it has no comparison at the top level.
std::string as_signal(const std::string& expr) {
  int depth = 0;
  std::size_t at = std::string::npos, width = 0;
  char quote = 0;
  for (std::size_t i = 0; i < expr.size(); ++i) {
    const char c = expr[i];
    if (quote) {
      if (c == '\\')
        ++i;
      else if (c == quote)
        quote = 0;
      continue;
    }
    if (c == '"' || c == '\'' || c == '`')
      quote = c;
    else if (c == '(' || c == '{' || c == '[')
      ++depth;
    else if (c == ')' || c == '}' || c == ']')
      --depth;
    else if (depth == 0 && (c == '>' || c == '<' || c == '=' || c == '!')) {
      const bool two = i + 1 < expr.size() && expr[i + 1] == '=';
      if (c == '=' && !two) continue;  // a label matcher's '=' is inside braces anyway
      if (c == '!' && !two) continue;
      at = i;
      width = two ? 2 : 1;
      i += width - 1;
    }
  }
  if (at == std::string::npos) return {};
  return expr.substr(0, at + width) + " bool" + expr.substr(at + width);
}

// The dashboard's expressions with Grafana's variables as a query would have
// them with "All" chosen.
std::string without_variables(std::string expr) {
  for (const auto& [var, value] : std::vector<std::pair<std::string, std::string>>{
           {"$__rate_interval", "1m"}, {"$job", ".*"}, {"$instance", ".*"}, {"$queue", ".*"}})
    for (auto p = expr.find(var); p != std::string::npos; p = expr.find(var, p))
      expr.replace(p, var.size(), value);
  return expr;
}

void panel_expressions(const json& panels, std::map<std::string, std::string>& out) {
  for (const auto& p : panels) {
    if (p.contains("panels")) panel_expressions(p["panels"], out);
    for (const auto& t : p.value("targets", json::array()))
      out["dashboard panel '" + p.value("title", "") + "' " + t.value("refId", "")] =
          without_variables(t.at("expr").get<std::string>());
  }
}

class prometheus_server {
 public:
  prometheus_server(const std::string& binary, const std::string& target,
                    const std::string& token) {
    std::ofstream(dir_.file("token")) << token;
    std::ofstream(dir_.file("prometheus.yml"))
        << "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
        << "rule_files:\n  - " << deploy_dir << "/prometheus/matchmaker.rules.yml\n  - "
        << deploy_dir << "/prometheus/matchmaker.alerts.yml\n"
        << "scrape_configs:\n  - job_name: matchmakerd\n    authorization:\n"
        << "      credentials_file: " << dir_.file("token") << "\n"
        << "    static_configs:\n      - targets: ['" << target << "']\n";
    for (int attempt = 0;; ++attempt) {  // a free port may be taken before it binds
      port_ = free_loopback_port();
      proc_ = std::make_unique<child_process>(
          std::vector<std::string>{binary, "--config.file=" + dir_.file("prometheus.yml"),
                                   "--storage.tsdb.path=" + dir_.file("data"),
                                   "--web.listen-address=127.0.0.1:" + std::to_string(port_),
                                   "--log.level=warn"},
          true);
      const auto deadline = std::chrono::steady_clock::now() + 60s;
      while (std::chrono::steady_clock::now() < deadline && proc_->running()) {
        auto r = client().Get("/-/ready");
        if (r && r->status == 200) return;
        std::this_thread::sleep_for(100ms);  // polling a process
      }
      if (attempt == 2) {
        std::string out;
        proc_->finish(&out);
        FAIL("prometheus did not become ready: " << out);
      }
    }
  }

  // The result of an instant query (status "success"), or the error.
  json query(const std::string& promql) const {
    auto r = client().Get("/api/v1/query", httplib::Params{{"query", promql}}, httplib::Headers{});
    if (!r) return {{"status", "error"}, {"error", "no answer"}};
    return json::parse(r->body, nullptr, false);
  }
  json rules() const {
    auto r = client().Get("/api/v1/rules");
    REQUIRE(r);
    return json::parse(r->body)["data"]["groups"];
  }

 private:
  httplib::Client client() const {
    httplib::Client c("127.0.0.1", port_);
    c.set_read_timeout(std::chrono::seconds(30));
    return c;
  }

  temp_dir dir_;
  std::uint16_t port_ = 0;
  std::unique_ptr<child_process> proc_;
};

}  // namespace

TEST_CASE("an alert's signal is its expression with the top comparison as bool", "[monitoring]") {
  CHECK(as_signal("up{job=\"m\"} == 0") == "up{job=\"m\"} == bool 0");
  CHECK(as_signal("time() - x > 300") == "time() - x > bool 300");
  CHECK(as_signal("increase(x[15m]) > 0") == "increase(x[15m]) > bool 0");
  CHECK(as_signal("sum(x{a=~\"b|c\"}) / sum(y) >= 0.5") ==
        "sum(x{a=~\"b|c\"}) / sum(y) >= bool 0.5");
  CHECK(as_signal("x{a!=\"b\"}") == "");
  CHECK(as_signal("rate(x[5m])") == "");
}

TEST_CASE("promtool accepts the rules, and each alert fires on its unit test's trouble",
          "[monitoring]") {
  const std::string promtool = on_path("promtool");
  INFO("promtool is Debian's prometheus package (./run test installs it)");
  REQUIRE_FALSE(promtool.empty());
  const auto [checked, check_out] =
      run_binary({promtool, "check", "rules", deploy_dir + "/prometheus/matchmaker.rules.yml",
                  deploy_dir + "/prometheus/matchmaker.alerts.yml"});
  INFO(check_out);
  CHECK(checked == 0);
  const auto [tested, test_out] =
      run_binary({promtool, "test", "rules", deploy_dir + "/prometheus/tests/alerts.test.yml"});
  INFO(test_out);
  CHECK(tested == 0);
}

TEST_CASE(
    "a real Prometheus scraping a live matchmakerd finds data for every rule and every "
    "dashboard expression",
    "[monitoring]") {
  const std::string prometheus = on_path("prometheus");
  INFO("prometheus is Debian's prometheus package (./run test installs it)");
  REQUIRE_FALSE(prometheus.empty());
  postgres_server pg;
  live_server s(
      {{"database", {{"path", nullptr}, {"url", pg.url()}}},
       {"cluster", {{"total", 2}}},
       {"actor", {{"port", 0}}},
       {"demo",
        {{"players", 3000}, {"queries_per_second", 50}, {"session_players_per_second", 8}}}});
  s.wait_until_serving({"mm-0", "mm-1", "sessions"});
  // What the demo load leaves out: a running lobby, found once, and a
  // running match open for backfill.
  s.post_json("/api/lobbies",
              {{"id", "arena-1"}, {"mode", "dm"}, {"datacenter", "paris"}, {"max_players", 8}},
              admin_token, 201);
  s.post_json("/api/lobbies/find",
              {{"modes", {"dm"}}, {"party_size", 2}, {"rtt_ms", {{"paris", 20}}}}, test_token);
  s.post_json("/api/backfills",
              {{"queue", "coop"},
               {"match_id", "match-1"},
               {"teams", {{{{"id", 901}, {"mmr", 1500}}}}},
               {"datacenter", "paris"}},
              test_token, 201);

  prometheus_server prom(prometheus, "127.0.0.1:" + std::to_string(s.port()), view_token);

  // Every expression to evaluate, by where it comes from.
  std::map<std::string, std::string> pending;
  const json groups = prom.rules();
  const std::string runbooks = read_file(deploy_dir + "/runbooks.md");
  std::size_t recording = 0, alerting = 0;
  std::set<std::string> alerts;
  for (const auto& g : groups)
    for (const auto& r : g["rules"]) {
      const std::string name = r["name"];
      INFO(name);
      if (r["type"] == "recording") {
        ++recording;
        pending["recording rule " + name] = name;
      } else {
        ++alerting;
        alerts.insert(name);
        const std::string signal = as_signal(r["query"]);
        CHECK_FALSE(signal.empty());  // SIGNAL OP THRESHOLD, as the file says
        pending["alert " + name] = signal;
        // Its runbook: a section of deploy/runbooks.md.
        std::string anchor = name;
        for (auto& c : anchor) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        CHECK(r["annotations"].value("runbook", "") == "deploy/runbooks.md#" + anchor);
        CHECK(runbooks.find("\n## " + name + "\n") != std::string::npos);
        CHECK_FALSE(r["annotations"].value("summary", "").empty());
      }
    }
  CHECK(recording >= 10);
  for (const char* wanted : {"MatchmakerdDown", "MatchmakerInstanceDown", "MatchmakerScanStalled",
                             "MatchmakerFakeOpponentShareHigh", "SessionTimeToMatchHigh",
                             "SessionTicketsExpiring", "MatchmakerSnapshotFailing"})
    CHECK(alerts.count(wanted) == 1);

  const json dashboard = json::parse(read_file(deploy_dir + "/grafana/matchmakerd.json"));
  std::size_t before = pending.size();
  panel_expressions(dashboard["panels"], pending);
  CHECK(pending.size() - before >= 40);
  // The variables' queries: label_values(SELECTOR, label) needs SELECTOR's data.
  for (const auto& v : dashboard["templating"]["list"])
    if (v["type"] == "query") {
      const std::string q = v["definition"];
      const std::string call = "label_values(";
      const auto comma = q.rfind(',');
      INFO(q);
      REQUIRE(q.rfind(call, 0) == 0);
      REQUIRE(comma != std::string::npos);
      pending["dashboard variable " + v["name"].get<std::string>()] =
          without_variables(q.substr(call.size(), comma - call.size()));
    }

  // Prometheus scrapes every second and evaluates the rules every second:
  // each expression is asked again until it has data, or the minute and a
  // half is up (rates need two scrapes; time to match needs matches).
  std::map<std::string, std::string> errors;
  const auto deadline = std::chrono::steady_clock::now() + 90s;
  while (!pending.empty() && std::chrono::steady_clock::now() < deadline) {
    for (auto it = pending.begin(); it != pending.end();) {
      const json a = prom.query(it->second);
      if (a.value("status", "") != "success") {
        errors[it->first] = it->second + ": " + a.dump();
        it = pending.erase(it);
      } else if (!a["data"]["result"].empty()) {
        it = pending.erase(it);
      } else {
        ++it;
      }
    }
    if (!pending.empty()) std::this_thread::sleep_for(1s);  // the next scrape and evaluation
  }
  std::string left;
  for (const auto& [where, expr] : pending) left += "\n  " + where + ": " + expr;
  std::string failed;
  for (const auto& [where, e] : errors) failed += "\n  " + where + ": " + e;
  INFO("no data after 90 s:" << left);
  INFO("refused by Prometheus:" << failed);
  CHECK(pending.empty());
  CHECK(errors.empty());
  // Every rule evaluated without an error.
  for (const auto& g : prom.rules())
    for (const auto& r : g["rules"]) {
      INFO(r["name"] << ": " << r.value("lastError", ""));
      CHECK(r["health"] == "ok");
    }
}
