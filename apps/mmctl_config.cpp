// mmctl's configuration commands: the session queues' configuration as
// versions changed while the server runs (docs/operations.md, "Changing the
// configuration while it runs").
#include <cstdio>
#include <fstream>
#include <iterator>

#include "mmctl_client.hpp"

namespace mmctl {

const char* const config_usage =
    "  config show                           the queues' configuration version in force\n"
    "  config history [--limit N]            its versions, newest first, each with its diff\n"
    "  config check FILE.json|-              what a candidate would change and strand\n"
    "  config apply FILE.json|- [--comment TEXT] [--base VERSION] [--force]\n"
    "                                        make it the next version (role admin); FILE holds\n"
    "                                        {\"queues\": [...]} or a config file with "
    "sessions.queues\n"
    "  config dry-run FILE.json|- [--window SECONDS]\n"
    "                                        replay the recording's last hour (or window) under\n"
    "                                        the version in force and the candidate (role admin)\n"
    "  config rollback VERSION [--comment TEXT] [--force]\n"
    "                                        apply an earlier version again (role admin)\n"
    "                                        config commands take --scope profile for the async\n"
    "                                        profile's tunables (FILE: {\"mmr_window\": ...} or a\n"
    "                                        config file with profile)\n"
    "\n";

namespace {

// The candidate: {"queues": [...]}, or a whole config file's sessions.queues.
json read_document(const std::string& path) {
  std::string text;
  if (path == "-") {
    text.assign(std::istreambuf_iterator<char>(std::cin), {});
  } else {
    std::ifstream in(path);
    if (!in) throw usage_error("cannot read '" + path + "'");
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded()) throw usage_error("'" + path + "' is not JSON");
  if (j.is_object() && j.contains("sessions") && j["sessions"].is_object() &&
      j["sessions"].contains("queues"))
    return {{"queues", j["sessions"]["queues"]}};
  if (j.is_object() && j.contains("profile") && j["profile"].is_object()) return j["profile"];
  return j;
}

json change_body(const flags& f) {
  json body = json::object();
  if (f.has("comment")) body["comment"] = f.one("comment");
  if (f.has("force")) body["force"] = true;
  return body;
}

// The two sides in words, then the JSON for tools.
void print_dry_run(const json& r) {
  const auto side = [](const char* name, const json& f) {
    std::fprintf(
        stderr,
        "  %-10s %5llu tickets: matched %5.1f%%, expired %5.1f%%; time to match p50 %.1f s, "
        "p95 %.1f s; MMR spread mean %.0f; worst RTT mean %.0f ms\n",
        name, f["tickets"].get<unsigned long long>(), 100 * f["matched_share"].get<double>(),
        100 * f["expired_share"].get<double>(), f["time_to_match_s"]["p50"].get<double>(),
        f["time_to_match_s"]["p95"].get<double>(), f["mmr_spread"]["mean"].get<double>(),
        f["worst_rtt_ms"]["mean"].get<double>());
  };
  std::fprintf(stderr, "dry run over %llu recorded tickets (%.1f s of CPU):\n",
               r["recording"]["tickets"].get<unsigned long long>(), r["cpu_seconds"].get<double>());
  side("recorded", r["recorded"]["figures"]);
  side("in force", r["current"]["figures"]);
  side("candidate", r["candidate"]["figures"]);
  print(r);
}

}  // namespace

bool is_config_command(const std::string& cmd) {
  return cmd == "config";
}

int config_command(api& a, const flags& f) {
  const auto& p = f.positional;
  const std::string what = p.empty() ? "" : p[0];
  const std::string scope = f.one("scope", "sessions");
  if (scope != "sessions" && scope != "profile")
    throw usage_error("--scope is sessions or profile");
  const std::string base = "/api/admin/config/" + scope;
  if (what == "show" && p.size() == 1) {
    print(a.get(base));
  } else if (what == "history" && p.size() == 1) {
    print(a.get(base +
                "/versions?limit=" + std::to_string(number_arg("--limit", f.one("limit", "20")))));
  } else if (what == "check" && p.size() == 2) {
    print(a.post(base + "/check", {{"document", read_document(p[1])}}));
  } else if (what == "apply" && p.size() == 2) {
    json body = change_body(f);
    body["document"] = read_document(p[1]);
    if (f.has("base")) body["base_version"] = number_arg("--base", f.one("base"));
    print(a.post(base, body));
  } else if (what == "dry-run" && p.size() == 2) {
    json body = {{"document", read_document(p[1])}};
    if (f.has("window")) body["window_s"] = number_arg("--window", f.one("window"));
    print_dry_run(a.post(base + "/dry-run", body));
  } else if (what == "rollback" && p.size() == 2) {
    json body = change_body(f);
    body["version"] = number_arg("VERSION", p[1]);
    print(a.post(base + "/rollback", body));
  } else {
    throw usage_error(
        "config show | history | check FILE | dry-run FILE | apply FILE | rollback VERSION");
  }
  return 0;
}

}  // namespace mmctl
