#include "query_recording_reader.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "mm/engine/error.hpp"
#include "query_recording.hpp"

namespace mm::server {

namespace {

namespace fs = std::filesystem;

[[noreturn]] void refuse(const std::string& what) {
  refuse_recording(what);
}

match_type result_of(const json& v, const std::string& where) {
  const std::string r = v.is_string() ? v.get<std::string>() : "";
  if (r == "success") return match_type::success;
  if (r == "none_found") return match_type::none_found;
  if (r == "fake_opponent") return match_type::fake_opponent;
  if (r == "invalid_request") return match_type::invalid_request;
  refuse(where + ": result must be success, none_found, fake_opponent or invalid_request");
}

std::vector<generic_model> models_of(const json& line, const std::string& where) {
  const auto it = line.find("models");
  if (it == line.end() || !it->is_array() || it->size() > 64)
    refuse(where + ": models must be a list of at most 64 models");
  std::vector<generic_model> out;
  for (std::size_t i = 0; i < it->size(); ++i) {
    const json& m = (*it)[i];
    const std::string at = "models[" + std::to_string(i) + "]";
    only_fields(m, {"id", "mmr", "attributes"}, at);
    std::array<std::uint32_t, generic_attribute_count> a{};
    const json& attrs = required(m, "attributes", at);
    if (!attrs.is_array() || attrs.size() > a.size())
      throw bad_request(at + ".attributes must be a list of at most 4 numbers");
    for (std::size_t k = 0; k < attrs.size(); ++k)
      a[k] = read_u32(attrs[k], at + ".attributes[" + std::to_string(k) + "]");
    out.emplace_back(read_id(required(m, "id", at), at + ".id"),
                     static_cast<float>(read_mmr(required(m, "mmr", at), at + ".mmr")), a);
  }
  return out;
}

sim::recorded_call call_of(const json& v, std::int64_t t, const generic_profile_config& profile,
                           const line_reader& at) {
  sim::recorded_call c;
  c.at_ms = t;
  const auto instance = v.find("instance");
  if (instance == v.end() || !instance->is_number_unsigned() ||
      instance->get<std::uint64_t>() > 1023)
    refuse(at.where() + ": instance must be 0 to 1023");
  c.instance = instance->get<std::uint32_t>();
  const std::string event = text_field(v, "event");
  try {
    if (event == "query") {
      c.what = sim::recorded_call::kind::query;
      c.request = read_query(required(v, "request", "the line"), profile, false).request;
      c.request.allow_fake_opponent =
          read_bool(required(v, "allow_fake_opponent", "the line"), "allow_fake_opponent");
      c.recorded = result_of(required(v, "result", "the line"), at.where());
      if (const auto o = v.find("opponent"); o != v.end())
        c.recorded_opponent = read_id(*o, "opponent");
    } else if (event == "update" || event == "enroll") {
      c.what =
          event == "update" ? sim::recorded_call::kind::update : sim::recorded_call::kind::enroll;
      c.models = models_of(v, at.where());
      if (event == "update") c.id = read_id(required(v, "id", "the line"), "id");
      if (event == "enroll" && c.models.empty()) throw bad_request("models: an enrolment has some");
    } else if (event == "remove") {
      c.what = sim::recorded_call::kind::remove;
      c.id = read_id(required(v, "id", "the line"), "id");
    } else {
      refuse(at.where() + ": event must be query, update, enroll, remove or gap");
    }
  } catch (const bad_request& e) {
    refuse(at.where() + ": " + e.what());
  }
  return c;
}

// The parts of a header that must be the same in every file.
json configuration_of(const json& header) {
  json c = header;
  for (const char* k : {"file", "started_unix_ms"}) c.erase(k);
  return c;
}

}  // namespace

server_config config_of_header(const json& header) {
  json config = json::object();
  for (const char* k : {"profile", "matchmaker", "instances"})
    if (header.contains(k)) config[k] = header[k];
  // The server's own reader of --config: through a file of its own.
  char path[] = "/tmp/mm-replay-config-XXXXXX";
  const int fd = ::mkstemp(path);
  if (fd < 0) refuse("recording: cannot make a temporary file");
  ::close(fd);
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << config.dump();
  }
  try {
    const char* args[] = {"matchmakerd", "--config", path};
    server_config c = parse_command_line(3, args).config;
    std::remove(path);
    return c;
  } catch (const std::exception& e) {
    std::remove(path);
    refuse(std::string("the recorded configuration: ") + e.what());
  }
}

query_recording_data read_query_recording(const fs::path& file_or_dir,
                                          const recording_limits& limits) {
  query_recording_data r;
  r.files = recording_files_at(file_or_dir, "queries", limits);
  std::string line;
  bool any = false;
  for (const auto& f : r.files) {
    line_reader in(f, limits);
    if (!in.next(line)) refuse(f.string() + ": empty, no header");
    const json h = parse_recording_line(line, in);
    if (text_field(h, "format") != query_recording_format)
      refuse(in.where() + ": not an async recording (format must be \"" + query_recording_format +
             "\")");
    const auto version = h.find("version");
    if (version == h.end() || !version->is_number_integer() ||
        version->get<std::int64_t>() != query_recording_format_version)
      refuse(in.where() + ": async recording format version " +
             (version == h.end() ? std::string("missing") : version->dump().substr(0, 32)) +
             ": this mmsim reads version " + std::to_string(query_recording_format_version));
    if (r.header.is_null()) {
      r.header = h;
      r.recorded = config_of_header(h);
    } else if (configuration_of(h) != configuration_of(r.header)) {
      refuse(in.where() + ": recorded with another configuration than " + r.files.front().string() +
             ": replay the two apart");
    }
    while (in.next(line)) {
      const json v = parse_recording_line(line, in);
      const std::int64_t t = read_recording_time(v, in);
      if (!any) r.first_unix_ms = r.last_unix_ms = t;
      any = true;
      r.first_unix_ms = std::min(r.first_unix_ms, t);
      r.last_unix_ms = std::max(r.last_unix_ms, t);
      if (text_field(v, "event") == "gap") {
        const auto n = v.find("dropped");
        if (n == v.end() || !n->is_number_unsigned())
          refuse(in.where() + ": dropped must be a count");
        r.dropped += n->get<std::uint64_t>();
        continue;
      }
      if (r.calls.size() == limits.max_calls)
        refuse(in.where() + ": more than " + std::to_string(limits.max_calls) +
               " calls, the most a replay holds");
      r.calls.push_back(call_of(v, t, r.recorded.profile, in));
    }
  }
  std::stable_sort(
      r.calls.begin(), r.calls.end(),
      [](const sim::recorded_call& a, const sim::recorded_call& b) { return a.at_ms < b.at_ms; });
  check_recording_span(r.first_unix_ms, r.last_unix_ms, limits, file_or_dir.string());
  return r;
}

namespace {

// When the recorded engines started: the first file's start, or the first
// call when the header does not say, says later, or says more than a day
// before it.
std::int64_t engines_started(const query_recording_data& r) {
  const auto it = r.header.find("started_unix_ms");
  if (it == r.header.end() || !it->is_number_integer()) return r.first_unix_ms;
  const std::int64_t started = it->get<std::int64_t>();
  return started <= r.first_unix_ms && r.first_unix_ms - started <= 86'400'000 ? started
                                                                               : r.first_unix_ms;
}

}  // namespace

std::int64_t async_replay_epoch_unix_ms(const query_recording_data& r) {
  const std::int64_t started = engines_started(r);
  return started - started % 3'600'000;
}

sim::async_replay_config async_replay_config_of(const query_recording_data& r,
                                                const server_config& engines,
                                                const std::string& database, std::uint64_t seed) {
  sim::async_replay_config c;
  // Time 0: the UTC hour the engines started in (the first file's start).
  const std::int64_t epoch = async_replay_epoch_unix_ms(r);
  c.start_ms = engines_started(r) - epoch;
  c.calls = r.calls;
  for (auto& x : c.calls) x.at_ms -= epoch;
  c.end_ms = r.last_unix_ms - epoch;
  c.profile = engines.profile;
  c.engine = engines.opts;
  c.instances = engines.cluster_total > 0 ? engines.cluster_total : engines.instances;
  c.database = database;
  c.seed = seed;
  return c;
}

}  // namespace mm::server
