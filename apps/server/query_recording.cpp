#include "query_recording.hpp"

#include <cstdio>

#include "server_config.hpp"

namespace mm::server {

namespace {

json attributes_array(const std::array<std::uint32_t, generic_attribute_count>& a) {
  return json(std::vector<std::uint32_t>(a.begin(), a.end()));
}

json models_json(const std::vector<generic_model>& models) {
  json out = json::array();
  for (const auto& m : models)
    out.push_back({{"id", m.id()}, {"mmr", m.mmr}, {"attributes", attributes_array(m.attributes)}});
  return out;
}

const char* type_name(match_type t) {
  switch (t) {
    case match_type::success:
      return "success";
    case match_type::fake_opponent:
      return "fake_opponent";
    case match_type::none_found:
      return "none_found";
    default:
      return "invalid_request";
  }
}

// Each engine's calls, stamped with the wall clock and its instance.
class instance_observer final : public engine_observer<generic_profile> {
 public:
  instance_observer(std::shared_ptr<query_recording> to, std::uint32_t instance)
      : to_(std::move(to)), instance_(instance) {}

  void answered(const request_type& request, const response_type& response) override {
    query_recording::call c = start(query_recording::call::kind::query);
    c.request = request;
    c.response = response;
    to_->push(std::move(c));
  }
  void updated(player_id id, std::span<const model_type> models) override {
    query_recording::call c = start(query_recording::call::kind::update);
    c.id = id;
    c.models.assign(models.begin(), models.end());
    to_->push(std::move(c));
  }
  void enrolled(std::span<const model_type> models) override {
    query_recording::call c = start(query_recording::call::kind::enroll);
    c.id = models.empty() ? invalid_player : models.front().id();
    c.models.assign(models.begin(), models.end());
    to_->push(std::move(c));
  }
  void removed(player_id id) override {
    query_recording::call c = start(query_recording::call::kind::remove);
    c.id = id;
    to_->push(std::move(c));
  }

 private:
  query_recording::call start(query_recording::call::kind k) const {
    query_recording::call c;
    c.what = k;
    c.instance = instance_;
    c.unix_ms = recording_unix_now_ms();
    return c;
  }
  const std::shared_ptr<query_recording> to_;
  const std::uint32_t instance_;
};

recording_file_settings files_of(const query_recording_settings& s) {
  recording_file_settings f;
  f.dir = s.dir;
  f.prefix = "queries";
  f.key = "record_queries.dir";
  f.max_file_bytes = s.max_file_bytes;
  f.max_files = s.max_files;
  f.max_pending = s.max_pending;
  return f;
}

json with_format(json header) {
  header["format"] = query_recording_format;
  header["version"] = query_recording_format_version;
  return header;
}

}  // namespace

query_recording::query_recording(const query_recording_settings& settings, json header)
    : files_(files_of(settings), with_format(std::move(header)), call_json) {}

std::shared_ptr<engine_observer<generic_profile>> observer_of(std::shared_ptr<query_recording> r,
                                                              std::uint32_t instance) {
  return std::make_shared<instance_observer>(std::move(r), instance);
}

std::shared_ptr<query_recording> open_query_recording(const server_config& c) {
  if (!c.record_queries.enabled) return nullptr;
  // What a replay needs to run the same engines: the profile, the engine's
  // options and the instances, as a configuration file holds them.
  const json all = json::parse(describe(c));
  json header = {{"profile", all.at("profile")},
                 {"matchmaker", all.at("matchmaker")},
                 {"instances", all.at("instances")},
                 {"cluster_total", c.cluster_total}};
  auto r = std::make_shared<query_recording>(c.record_queries, std::move(header));
  std::printf("matchmakerd: recording the async queries and cache updates into %s\n",
              c.record_queries.dir.c_str());
  std::fflush(stdout);
  return r;
}

json call_json(const query_recording::call& c) {
  using kind = query_recording::call::kind;
  json j = {{"t", c.unix_ms}, {"instance", c.instance}};
  switch (c.what) {
    case kind::query: {
      const auto& q = c.request.query;
      j["event"] = "query";
      j["request"] = {{"attacker_id", q.attacker},
                      {"mmr", q.mmr},
                      {"attributes", attributes_array(q.attributes)},
                      {"retries", c.request.num_retries},
                      {"excluded_ids", c.request.excluded_player_ids}};
      j["allow_fake_opponent"] = c.request.allow_fake_opponent;
      j["result"] = type_name(c.response.type);
      if (c.response.type == match_type::success || c.response.type == match_type::fake_opponent)
        j["opponent"] = c.response.best_candidate_id;
      break;
    }
    case kind::update:
      j["event"] = "update";
      j["id"] = c.id;
      j["models"] = models_json(c.models);
      break;
    case kind::enroll:
      j["event"] = "enroll";
      j["models"] = models_json(c.models);
      break;
    case kind::remove:
      j["event"] = "remove";
      j["id"] = c.id;
      break;
  }
  return j;
}

}  // namespace mm::server
