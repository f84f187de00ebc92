// mmctl: the command-line client of matchmakerd's admin HTTP API.
//
//   mmctl [--url URL] [--token TOKEN] COMMAND [ARGS]
//
// URL and TOKEN default to $MMCTL_URL (else http://127.0.0.1:8080) and
// $MMCTL_TOKEN. Answers print as JSON on stdout, errors on stderr. Exit codes:
// 0 done, 1 the server refused or failed (or some CSV rows were bad), 2 usage.
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "mm/storage/csv_import.hpp"
#include "mmctl_client.hpp"

namespace {

using namespace mmctl;

const char* const async_usage =
    "usage: mmctl [--url URL] [--token TOKEN] COMMAND [ARGS]\n"
    "\n"
    "  info [MATCHMAKER]                     every matchmaker, or one with its buckets\n"
    "  query --attacker ID --mmr X [--attr NAME=V ...] [--retries N] [--exclude ID,ID,...]\n"
    "                                        a real matchmaking request (role test)\n"
    "  test --attacker ID --mmr X [--attr NAME=V ...] [--max-retries N]\n"
    "                                        the 'why no match' tool: retries 0..N, and why\n"
    "                                        the nearest candidates were rejected (role test)\n"
    "  inspect MATCHMAKER BUCKET [--offset N] [--limit N]\n"
    "                                        a page of a bucket's players, highest MMR first\n"
    "  player ID                             a player's row and place in every matchmaker\n"
    "  top [N]                               the N highest-MMR cached players (default 100)\n"
    "  rebalance [MATCHMAKER]                rebalance now (role admin)\n"
    "  reset [MATCHMAKER]                    clear the cache, then scan (role admin)\n"
    "  add ID | remove ID                    put a stored player in the cache, or take one out\n"
    "  import FILE.csv|- [--batch N]         upsert players into the player table (role admin);\n"
    "                                        columns id,mmr[,attr0..attr3[,is_bot]]\n"
    "  export [FILE.csv]                     the player table as CSV (stdout by default)\n"
    "  tokens reload                         read the config file's tokens again (role admin)\n"
    "\n";
const char* const usage_end =
    "URL defaults to $MMCTL_URL, else http://127.0.0.1:8080; TOKEN to $MMCTL_TOKEN.\n";

json query_body(const flags& f, bool test) {
  if (!f.has("attacker") || !f.has("mmr")) throw usage_error("--attacker and --mmr are needed");
  json b;
  b["attacker_id"] = number_arg("--attacker", f.one("attacker"));
  try {
    b["mmr"] = std::stod(f.one("mmr"));
  } catch (const std::exception&) {
    throw usage_error("--mmr expects a number");
  }
  json attrs = json::object();
  for (const auto& [k, v] : f.named) {
    if (k != "attr") continue;
    const auto eq = v.find('=');
    if (eq == std::string::npos) throw usage_error("--attr expects NAME=VALUE, got '" + v + "'");
    attrs[v.substr(0, eq)] = number_arg("--attr " + v.substr(0, eq), v.substr(eq + 1));
  }
  if (!attrs.empty()) b["attributes"] = attrs;
  if (test) {
    if (f.has("max-retries")) b["max_retries"] = number_arg("--max-retries", f.one("max-retries"));
  } else {
    if (f.has("retries")) b["retries"] = number_arg("--retries", f.one("retries"));
    if (f.has("exclude")) {
      json ids = json::array();
      std::stringstream s(f.one("exclude"));
      for (std::string id; std::getline(s, id, ',');) ids.push_back(number_arg("--exclude", id));
      b["excluded_ids"] = ids;
    }
  }
  return b;
}

// The test-query report in words, then the JSON for tools.
void print_test(const json& r) {
  std::cerr << r["summary"].get<std::string>() << '\n';
  for (const auto& m : r["matchmakers"]) {
    std::cerr << "  " << m["matchmaker"].get<std::string>() << ": " << m["players_cached"]
              << " cached, " << m["buckets_walked"] << " buckets walked, "
              << m["buckets_never_walked"] << " kept out by hard labels\n";
    for (const auto& t : m["tries"])
      std::cerr << "    retry " << t["retries"] << ": " << t["result"].get<std::string>() << ", "
                << t["players_tested"] << " tested, " << t["possible"] << " possible\n";
    for (const auto& x : m["rejected"])
      std::cerr << "    rejected " << x["id"] << " (MMR " << x["mmr"]
                << "): " << x["reason"].get<std::string>() << '\n';
  }
  print(r);
}

// Redrawn in place on a terminal; into a log only the final state is written.
void progress_bar(std::uint64_t done, std::uint64_t total, std::uint64_t lines, double seconds,
                  bool final) {
  if (!final && !isatty(STDERR_FILENO)) return;
  const int width = 30;
  const double share = total ? static_cast<double>(done) / total : 0;
  const int filled = static_cast<int>(share * width);
  std::fprintf(stderr, "\r[%s%s] %5.1f%%  %llu lines  %.0f lines/s",
               std::string(filled, '#').c_str(), std::string(width - filled, ' ').c_str(),
               share * 100, static_cast<unsigned long long>(lines),
               seconds > 0 ? lines / seconds : 0.0);
  std::fflush(stderr);
}

int import_csv(api& a, const flags& f) {
  if (f.positional.size() != 1) throw usage_error("import needs one FILE.csv (or - for stdin)");
  const std::string path = f.positional[0];
  const std::size_t batch = f.has("batch") ? number_arg("--batch", f.one("batch")) : 1000;
  if (batch == 0) throw usage_error("--batch must be > 0");
  std::ifstream file;
  std::istream* in = &std::cin;
  std::uint64_t total = 0;
  if (path != "-") {
    file.open(path, std::ios::binary | std::ios::ate);
    if (!file) throw usage_error("cannot read '" + path + "'");
    total = static_cast<std::uint64_t>(file.tellg());
    file.seekg(0);
    in = &file;
  }
  const auto start = std::chrono::steady_clock::now();
  std::uint64_t line_no = 0, bytes = 0, written = 0, bad = 0, reported = 0;
  json rows = json::array();
  std::vector<std::uint64_t> lines_of_rows;
  auto report = [&](std::uint64_t line, const std::string& why) {
    ++bad;
    if (++reported <= 20)
      std::fprintf(stderr, "%sline %llu: %s\n", isatty(STDERR_FILENO) ? "\r\033[K" : "",
                   static_cast<unsigned long long>(line), why.c_str());
  };
  auto flush = [&] {
    if (rows.empty()) return;
    const json r = a.post("/api/players", {{"players", rows}});
    written += r["written"].get<std::uint64_t>();
    for (const auto& x : r["rejected"])
      report(lines_of_rows.at(x["index"].get<std::size_t>()), x["reason"].get<std::string>());
    rows = json::array();
    lines_of_rows.clear();
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    progress_bar(bytes, total ? total : bytes, line_no, s, false);
  };
  for (std::string line; std::getline(*in, line);) {
    ++line_no;
    bytes += line.size() + 1;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#' || (line_no == 1 && line.rfind("id", 0) == 0)) continue;
    std::string problem;
    const auto row = mm::parse_csv_player(line, problem);
    if (!row) {
      report(line_no, problem);
      continue;
    }
    json j = {{"id", row->id},
              {"mmr", row->mmr},
              {"attributes", row->attributes},
              {"is_bot", row->is_bot}};
    rows.push_back(std::move(j));
    lines_of_rows.push_back(line_no);
    if (rows.size() >= batch) flush();
  }
  flush();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  progress_bar(total ? total : bytes, total ? total : bytes, line_no, s, true);
  std::fprintf(stderr, "\n");
  print({{"lines", line_no}, {"written", written}, {"bad_rows", bad}, {"seconds", s}});
  return bad == 0 ? 0 : 1;
}

int export_csv(api& a, const flags& f) {
  std::ofstream file;
  std::ostream* out = &std::cout;
  if (!f.positional.empty()) {
    file.open(f.positional[0]);
    if (!file) throw usage_error("cannot write '" + f.positional[0] + "'");
    out = &file;
  }
  *out << "id,mmr,attr0,attr1,attr2,attr3,is_bot\n";
  std::uint64_t after = 0, n = 0;
  for (;;) {
    const json page = a.get("/api/players?limit=10000&after=" + std::to_string(after));
    for (const auto& p : page["players"]) {
      std::ostringstream mmr;
      mmr.precision(17);
      mmr << p["mmr"].get<double>();
      *out << p["id"].get<std::uint64_t>() << ',' << mmr.str();
      for (const auto& v : p["attributes"]) *out << ',' << v.get<std::int64_t>();
      *out << ',' << (p["is_bot"].get<bool>() ? 1 : 0) << '\n';
      ++n;
    }
    if (page["next_after"].is_null()) break;
    after = page["next_after"].get<std::uint64_t>();
  }
  out->flush();
  std::fprintf(stderr, "exported %llu players\n", static_cast<unsigned long long>(n));
  return 0;
}

std::string matchmaker_path(const flags& f) {
  return f.positional.empty() ? "/api" : "/api/matchmakers/" + f.positional[0];
}

int run(const std::vector<std::string>& args) {
  const char* env_url = std::getenv("MMCTL_URL");
  const char* env_token = std::getenv("MMCTL_TOKEN");
  std::string url = env_url ? env_url : "http://127.0.0.1:8080";
  std::string token = env_token ? env_token : "";
  std::size_t i = 0;
  for (; i < args.size() && args[i].rfind("--", 0) == 0; i += 2) {
    if (args[i] == "--help") {
      std::cout << async_usage << session_usage << usage_end;
      return 0;
    }
    if (i + 1 >= args.size()) throw usage_error(args[i] + " needs a value");
    if (args[i] == "--url")
      url = args[i + 1];
    else if (args[i] == "--token")
      token = args[i + 1];
    else
      throw usage_error("unknown option " + args[i]);
  }
  if (i >= args.size()) throw usage_error("no command");
  const std::string cmd = args[i];
  const flags f = parse_flags(args, i + 1);
  api a(url, token);
  if (cmd == "info")
    print(f.positional.empty() ? a.get("/api/matchmakers") : a.get(matchmaker_path(f)));
  else if (cmd == "query")
    print(a.post("/api/query", query_body(f, false)));
  else if (cmd == "test")
    print_test(a.post("/api/test-query", query_body(f, true)));
  else if (cmd == "inspect") {
    if (f.positional.size() != 2) throw usage_error("inspect needs MATCHMAKER BUCKET");
    print(a.get("/api/matchmakers/" + f.positional[0] + "/buckets/" + f.positional[1] +
                "?offset=" + std::to_string(number_arg("--offset", f.one("offset", "0"))) +
                "&limit=" + std::to_string(number_arg("--limit", f.one("limit", "50")))));
  } else if (cmd == "player") {
    if (f.positional.size() != 1) throw usage_error("player needs an ID");
    print(a.get("/api/players/" + std::to_string(number_arg("ID", f.positional[0]))));
  } else if (cmd == "top") {
    print(a.get("/api/top?limit=" +
                std::to_string(f.positional.empty() ? 100 : number_arg("N", f.positional[0]))));
  } else if (cmd == "rebalance" || cmd == "reset") {
    print(a.post(matchmaker_path(f) + "/" + cmd, json::object()));
  } else if (cmd == "add" || cmd == "remove") {
    if (f.positional.size() != 1) throw usage_error(cmd + " needs an ID");
    print(a.post("/api/cache/" + cmd, {{"id", number_arg("ID", f.positional[0])}}));
  } else if (cmd == "import")
    return import_csv(a, f);
  else if (cmd == "export")
    return export_csv(a, f);
  else if (cmd == "tokens") {
    if (f.positional != std::vector<std::string>{"reload"}) throw usage_error("tokens reload");
    print(a.post("/api/admin/tokens/reload", json::object()));
  } else if (is_config_command(cmd)) {
    return config_command(a, f);
  } else if (is_session_command(cmd)) {
    mm::client::event_connect c;
    mm::client::parse_base_url(url, c);
    c.token = token;
    return session_command(a, cmd, f, c);
  } else
    throw usage_error("unknown command '" + cmd + "'");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const usage_error& e) {
    std::cerr << "mmctl: " << e.what() << "\n\n"
              << async_usage << session_usage << config_usage << usage_end;
    return 2;
  } catch (const server_error& e) {
    std::fprintf(stderr, "mmctl: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mmctl: %s\n", e.what());
    return 1;
  }
}
