// JSON shapes of the admin HTTP API (docs/operations.md lists them), and strict
// readers for request bodies: a wrong type, a missing field or an unknown field
// throws bad_request naming the field, which the API answers with a 400.
#pragma once

#include <initializer_list>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "mm/actors/messages.hpp"
#include "mm/engine/generic_profile.hpp"
#include "mm/engine/player_row.hpp"

namespace mm::server {

using json = nlohmann::json;

class bad_request : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// The profile's attributes as configured: [{"name", "rule", "weight", ...}].
json attributes_json(const std::vector<generic_attribute>& attributes);

// Cached players and queries name their attributes as the profile does.
json model_json(const generic_model& m, const generic_profile_config& p);
json reply_json(const match_reply<generic_model>& r, const generic_profile_config& p);
json info_json(const std::string& name, const instance_info& i, bool with_buckets);
json bucket_json(const bucket_info& b);
json player_info_json(const player_info& p, const engine_info& e);
json rebalance_json(const rebalance_report& r);
json explanation_json(const query_explanation& x);
// Stored rows carry the table's four attribute columns by position.
json row_json(const player_row& r);

// {"attacker_id", "mmr", "attributes"?: {name: value} or [values], "retries"?,
//  "excluded_ids"?: [ids]}; "max_retries"? too when `allow_max_retries`.
struct query_body {
  match_request<generic_query> request;
  std::uint32_t max_retries = 9;
};
query_body read_query(const json& body, const generic_profile_config& p, bool allow_max_retries);

// {"id", "mmr", "attributes"?: [values] or {name: value}, "is_bot"?, "payload"?}
player_row read_row(const json& body, const generic_profile_config& p, const std::string& where);

// {"id": <player id>}
player_id read_id_body(const json& body);

// Parses a request body; malformed JSON is a bad_request with the parser's
// words, and so is nesting deeper than max_json_depth. A number that overflows
// a double does not fail the parse: the reader of its field refuses it.
inline constexpr std::size_t max_json_depth = 32;
json parse_body(const std::string& text);

// A value in words for an error message: its type, or its text when short.
// Never the whole of a large or deep value.
std::string describe(const json& v);

std::uint64_t read_id(const json& v, const std::string& where);

// Field readers shared by the API's bodies; each error names `where`.
void only_fields(const json& body, std::initializer_list<const char*> allowed,
                 const std::string& where);
const json& required(const json& body, const char* field, const std::string& where);
double read_number(const json& v, const std::string& where);  // finite
double read_mmr(const json& v, const std::string& where);
std::uint32_t read_u32(const json& v, const std::string& where);
// A string of 1 to max_bytes bytes.
std::string read_text(const json& v, const std::string& where, std::size_t max_bytes);
// The same, for an id that is later a segment of its URL (a lobby's, a
// running match's): no '/' nor control bytes, or nobody could address it
// again (a client percent-encodes the rest, as for any path segment).
std::string read_url_id(const json& v, const std::string& where, std::size_t max_bytes);
bool read_bool(const json& v, const std::string& where);

}  // namespace mm::server
