#include "json_codec.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string_view>

namespace mm::server {

void only_fields(const json& body, std::initializer_list<const char*> allowed,
                 const std::string& where) {
  if (!body.is_object()) throw bad_request(where + " must be a JSON object");
  for (const auto& [k, v] : body.items()) {
    bool known = false;
    for (const char* a : allowed) known |= k == a;
    if (!known) {
      std::string list;
      for (const char* a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
      throw bad_request(where + ": unknown field '" + k + "' (expected " + list + ")");
    }
  }
}

const json& required(const json& body, const char* field, const std::string& where) {
  const auto it = body.find(field);
  if (it == body.end()) throw bad_request(where + ": missing field '" + field + "'");
  return *it;
}

// A number too large for a double (1e309) reaches the readers as a string
// with this prefix (see parse_body), so they can name the field.
constexpr std::string_view out_of_range_marker = "\x01number out of range: ";

bool out_of_range(const json& v) {
  return v.is_string() && v.get_ref<const std::string&>().rfind(out_of_range_marker, 0) == 0;
}

double read_number(const json& v, const std::string& where) {
  if (out_of_range(v)) throw bad_request(where + " is out of range: it does not fit a double");
  if (!v.is_number()) throw bad_request(where + " must be a number, got " + describe(v));
  const double x = v.get<double>();
  if (!std::isfinite(x)) throw bad_request(where + " must be finite");
  return x;
}

// Every MMR that comes in: the same rule and words as the player table's.
double read_mmr(const json& v, const std::string& where) {
  // Past a double is past a float too: the same words as for 1e39.
  if (out_of_range(v))
    throw bad_request(where + ": " + *mmr_problem(std::numeric_limits<double>::max()));
  const double x = read_number(v, where);
  if (auto why = mmr_problem(x)) throw bad_request(where + ": " + *why);
  return x;
}

std::uint32_t read_u32(const json& v, const std::string& where) {
  if (!v.is_number_unsigned() || v.get<std::uint64_t>() > std::numeric_limits<std::uint32_t>::max())
    throw bad_request(where + " must be an integer from 0 to 4294967295, got " + describe(v));
  return v.get<std::uint32_t>();
}

std::string read_text(const json& v, const std::string& where, std::size_t max_bytes) {
  if (!v.is_string() || out_of_range(v))
    throw bad_request(where + " must be a string, got " + describe(v));
  const auto& s = v.get_ref<const std::string&>();
  if (s.empty() || s.size() > max_bytes)
    throw bad_request(where + " must be 1 to " + std::to_string(max_bytes) + " bytes, got " +
                      std::to_string(s.size()));
  return s;
}

std::string read_url_id(const json& v, const std::string& where, std::size_t max_bytes) {
  std::string s = read_text(v, where, max_bytes);
  for (const unsigned char c : s)
    if (c == '/' || c < 0x20 || c == 0x7f)
      throw bad_request(where + " must not hold '/' or control characters");
  return s;
}

bool read_bool(const json& v, const std::string& where) {
  if (!v.is_boolean()) throw bad_request(where + " must be true or false, got " + describe(v));
  return v.get<bool>();
}

namespace {

// Attributes by name ({"region": 2}) or by position ([2, 0, 1]).
template <class Array>
void read_attributes(const json& v, const generic_profile_config& p, Array& out,
                     const std::string& where) {
  if (v.is_array()) {
    if (v.size() > out.size())
      throw bad_request(where + " has " + std::to_string(v.size()) + " values, at most " +
                        std::to_string(out.size()));
    for (std::size_t i = 0; i < v.size(); ++i)
      out[i] = read_u32(v[i], where + "[" + std::to_string(i) + "]");
    return;
  }
  if (!v.is_object()) throw bad_request(where + " must be an object {name: value} or a list");
  for (const auto& [name, x] : v.items()) {
    std::size_t i = 0;
    while (i < p.attributes.size() && p.attributes[i].name != name) ++i;
    if (i == p.attributes.size()) {
      std::string names;
      for (const auto& a : p.attributes) names += (names.empty() ? "" : ", ") + a.name;
      throw bad_request(where + ": unknown attribute '" + name + "' (the profile has " +
                        (names.empty() ? std::string("none") : names) + ")");
    }
    out[i] = read_u32(x, where + "." + name);
  }
}

std::string result_name(match_type t) {
  return std::string(to_string(t));
}

}  // namespace

std::string describe(const json& v) {
  switch (v.type()) {
    case json::value_t::object:
      return "an object";
    case json::value_t::array:
      return "a list";
    case json::value_t::string: {
      if (out_of_range(v)) return "a number out of range";
      const auto& s = v.get_ref<const std::string&>();
      if (s.size() > 32) return "a string of " + std::to_string(s.size()) + " bytes";
      return json(s).dump(-1, ' ', true, json::error_handler_t::replace);
    }
    default:
      return v.dump();  // a number, true, false or null: short
  }
}

std::uint64_t read_id(const json& v, const std::string& where) {
  if (!v.is_number_unsigned() || v.get<std::uint64_t>() == 0)
    throw bad_request(where + " must be a player id (an integer > 0), got " + describe(v));
  return v.get<std::uint64_t>();
}

// Before the parser sees the text: nesting is bounded (the parser itself is
// iterative, but every consumer of a deep tree recurses), and a number that
// overflows a double becomes a marked string instead of failing the whole
// body, so one bad field in a batch costs that row only.
json parse_body(const std::string& text) {
  std::string rewritten;  // only when a number had to be replaced
  std::size_t copied = 0, depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_json_depth)
        throw bad_request("the body nests deeper than " + std::to_string(max_json_depth) +
                          " levels");
    } else if (c == ']' || c == '}') {
      if (depth > 0) --depth;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      std::size_t end = i;
      while (end < text.size() &&
             std::string_view("+-.eE0123456789").find(text[end]) != std::string_view::npos)
        ++end;
      const std::string_view token(text.data() + i, end - i);
      // Only an exponent or more than 308 digits can overflow a double.
      if (token.find_first_of("eE") != std::string_view::npos || token.size() > 308) {
        const std::string number(token);
        errno = 0;
        const double x = std::strtod(number.c_str(), nullptr);
        if (std::isinf(x)) {
          rewritten.append(text, copied, i - copied);
          rewritten += "\"\\u0001number out of range: " + number.substr(0, 24) + "\"";
          copied = end;
        }
      }
      i = end - 1;
    }
  }
  if (copied > 0) rewritten.append(text, copied, std::string::npos);
  try {
    return json::parse(copied > 0 ? rewritten : text);
  } catch (const json::exception& e) {
    // The parser quotes the token it stopped at ("last read: '...'"), which can
    // be most of the body: keep the start and the end of its words.
    std::string why = e.what();
    if (why.size() > 300) why = why.substr(0, 200) + " ... " + why.substr(why.size() - 80);
    throw bad_request("the body is not valid JSON: " + why);
  }
}

json attributes_json(const std::vector<generic_attribute>& attributes) {
  json out = json::array();
  for (const auto& a : attributes)
    out.push_back({{"name", a.name},
                   {"rule", to_string(a.rule)},
                   {"weight", a.weight},
                   {"bucketing", to_string(a.bucketing)},
                   {"tier_width", a.tier_width}});
  return out;
}

json model_json(const generic_model& m, const generic_profile_config& p) {
  json attrs = json::object();
  for (std::size_t i = 0; i < p.attributes.size(); ++i)
    attrs[p.attributes[i].name] = m.attributes[i];
  return {{"id", m.id()}, {"mmr", m.mmr}, {"attributes", attrs}};
}

json reply_json(const match_reply<generic_model>& r, const generic_profile_config& p) {
  json j = {{"result", result_name(r.type)},
            {"best_candidate_id", r.best_candidate_id},
            {"quality", r.quality},
            {"players_tested", r.players_tested}};
  if (r.has_model) j["model"] = model_json(r.model, p);
  if (!r.error.empty()) j["error"] = r.error;
  return j;
}

json bucket_json(const bucket_info& b) {
  return {{"index", b.index},       {"labels", b.labels}, {"mmr_low", b.mmr_low},
          {"mmr_high", b.mmr_high}, {"count", b.count},   {"capacity", b.capacity},
          {"fill", b.fill}};
}

json info_json(const std::string& name, const instance_info& i, bool with_buckets) {
  const engine_info& e = i.engine;
  const engine_stats& s = e.stats;
  json j = {{"name", name},
            {"players", e.players},
            {"capacity", e.capacity},
            {"fill", e.overall_fill},
            {"bucket_count", e.bucket_count},
            {"mmr_low", e.mmr_low},
            {"mmr_high", e.mmr_high},
            {"samples", e.samples},
            {"enough_data_for_rebalance", e.enough_data_for_rebalance},
            {"last_rebalance_unix_ms", e.last_rebalance_unix_ms},
            {"memory_bytes", e.memory_bytes},
            {"state_bytes", i.instance.state_bytes},
            {"last_snapshot_unix_ms", i.instance.last_snapshot_unix_ms},
            {"scanned_players", s.rows_applied},
            {"scan_errors", i.instance.scan_errors},
            {"scan_error_rows", s.rows_malformed},
            {"scan_reports", i.instance.scan_reports},
            {"requests",
             {{"success", s.queries_success},
              {"none_found", s.queries_none_found},
              {"fake_opponent", s.queries_fake},
              {"invalid_request", s.queries_invalid}}},
            {"removed_after_offer", s.removed_after_offer},
            {"restarts", i.supervisor.restarts},
            {"updates_dropped", i.supervisor.updates_dropped},
            {"row_reports", e.row_reports},
            {"evictions", s.evictions},
            {"inserts_refused_capacity", s.inserts_refused_capacity},
            {"updates",
             {{"inserted", s.updates_inserted},
              {"updated", s.updates_updated},
              {"bucket_changed", s.updates_bucket_changed},
              {"removed", s.updates_removed},
              {"no_op", s.updates_no_op},
              {"rejected", s.updates_rejected}}}};
  if (with_buckets) {
    json buckets = json::array();
    for (const auto& b : e.buckets) buckets.push_back(bucket_json(b));
    j["buckets"] = std::move(buckets);
  }
  return j;
}

json player_info_json(const player_info& p, const engine_info& e) {
  json buckets = json::array();
  for (std::uint32_t b : p.buckets)
    buckets.push_back(b < e.buckets.size() ? bucket_json(e.buckets[b]) : json{{"index", b}});
  return {{"participating", p.participating},
          {"mmr", p.mmr},
          {"percentile", p.percentile},
          {"buckets", buckets}};
}

json rebalance_json(const rebalance_report& r) {
  return {{"performed", r.performed},
          {"reason", r.reason},
          {"mmr_low", r.mmr_low},
          {"mmr_high", r.mmr_high},
          {"samples", r.samples},
          {"buckets_before", r.buckets_before},
          {"buckets_after", r.buckets_after},
          {"buckets_resized", r.buckets_resized},
          {"buckets_pruned", r.buckets_pruned},
          {"players_before", r.players_before},
          {"players_after", r.players_after},
          {"players_lost", r.players_lost},
          {"capacity_after", r.capacity_after}};
}

json explanation_json(const query_explanation& x) {
  json tries = json::array();
  for (const auto& t : x.tries)
    tries.push_back({{"retries", t.retries},
                     {"result", result_name(t.type)},
                     {"best_candidate_id", t.best_candidate_id},
                     {"quality", t.quality},
                     {"mmr_gap", t.mmr_gap},
                     {"players_tested", t.players_tested},
                     {"possible", t.possible}});
  json rejected = json::array();
  for (const auto& r : x.rejected)
    rejected.push_back({{"id", r.id}, {"mmr", r.mmr}, {"bucket", r.bucket}, {"reason", r.reason}});
  return {{"tries", tries},
          {"rejected", rejected},
          {"players_cached", x.players_cached},
          {"buckets_walked", x.buckets_walked},
          {"buckets_never_walked", x.buckets_never_walked},
          {"excluded_seen", x.excluded_seen}};
}

json row_json(const player_row& r) {
  return {
      {"id", r.id},         {"mmr", r.mmr},         {"attributes", r.attributes},
      {"is_bot", r.is_bot}, {"payload", r.payload}, {"updated_at_unix_ms", r.updated_at_unix_ms}};
}

query_body read_query(const json& body, const generic_profile_config& p, bool allow_max_retries) {
  // One rule for both: "retries" is the caller's retry count (the match rule
  // widens with it); "max_retries" is the test query's last try, so a real
  // query refuses it rather than ignore it.
  if (allow_max_retries)
    only_fields(body,
                {"attacker_id", "mmr", "attributes", "retries", "excluded_ids", "max_retries"},
                "the query");
  else if (body.is_object() && body.contains("max_retries"))
    throw bad_request(
        "the query: 'max_retries' belongs to /api/test-query; a query tries once "
        "at 'retries'");
  else
    only_fields(body, {"attacker_id", "mmr", "attributes", "retries", "excluded_ids"}, "the query");
  query_body out;
  auto& q = out.request.query;
  q.attacker = read_id(required(body, "attacker_id", "the query"), "attacker_id");
  q.mmr = static_cast<float>(read_mmr(required(body, "mmr", "the query"), "mmr"));
  if (auto it = body.find("attributes"); it != body.end())
    read_attributes(*it, p, q.attributes, "attributes");
  if (auto it = body.find("retries"); it != body.end())
    out.request.num_retries = read_u32(*it, "retries");
  if (auto it = body.find("max_retries"); it != body.end()) {
    out.max_retries = read_u32(*it, "max_retries");
    if (out.max_retries > 100) throw bad_request("max_retries must be at most 100");
  }
  if (allow_max_retries && out.request.num_retries > out.max_retries)
    throw bad_request("retries (" + std::to_string(out.request.num_retries) +
                      ", the first try) must not exceed max_retries (" +
                      std::to_string(out.max_retries) + ", the last)");
  if (auto it = body.find("excluded_ids"); it != body.end()) {
    if (!it->is_array()) throw bad_request("excluded_ids must be a list of player ids");
    out.request.excluded_player_ids.reserve(it->size());
    for (std::size_t i = 0; i < it->size(); ++i)
      out.request.excluded_player_ids.push_back(
          read_id((*it)[i], "excluded_ids[" + std::to_string(i) + "]"));
  }
  return out;
}

player_row read_row(const json& body, const generic_profile_config& p, const std::string& where) {
  only_fields(body, {"id", "mmr", "attributes", "is_bot", "payload"}, where);
  player_row r;
  r.id = read_id(required(body, "id", where), where + ".id");
  r.mmr = read_mmr(required(body, "mmr", where), where + ".mmr");
  if (auto it = body.find("attributes"); it != body.end()) {
    std::array<std::uint32_t, row_attribute_count> a{};
    read_attributes(*it, p, a, where + ".attributes");
    for (std::size_t i = 0; i < a.size(); ++i) r.attributes[i] = a[i];
  }
  if (auto it = body.find("is_bot"); it != body.end()) {
    if (!it->is_boolean()) throw bad_request(where + ".is_bot must be true or false");
    r.is_bot = it->get<bool>();
  }
  if (auto it = body.find("payload"); it != body.end()) {
    if (!it->is_string()) throw bad_request(where + ".payload must be a string");
    r.payload = it->get<std::string>();
  }
  return r;
}

player_id read_id_body(const json& body) {
  only_fields(body, {"id"}, "the body");
  return read_id(required(body, "id", "the body"), "id");
}

}  // namespace mm::server
