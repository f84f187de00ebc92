// Fuzz target: any request body, through the parser and every body reader of
// the HTTP API, either reads or is refused with bad_request (a 400 naming the
// field); nothing else may escape, nothing may crash, and an error message
// quotes no more than a short piece of the input.
#include <cstdint>
#include <string>

#include "fuzz_target.hpp"
#include "json_codec.hpp"
#include "mm/engine/synthetic_players.hpp"
#include "query_text.hpp"

namespace {

template <class Read>
void refused_or_read(Read read) {
  try {
    read();
  } catch (const mm::server::bad_request& e) {
    // Messages name the field and quote at most a short value.
    mm::fuzz::require(std::string(e.what()).size() < 600);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace mm::server;
  static const mm::generic_profile_config profile = mm::demo_profile_config();
  const std::string text(reinterpret_cast<const char*>(data), size);
  // The single query's fast path (query_text.hpp) answers only what the
  // tree answers, value for value.
  if (const auto plain = read_plain_query(text, profile)) {
    const query_body tree = read_query(parse_body(text), profile, false);
    mm::fuzz::require(plain->request.query.attacker == tree.request.query.attacker &&
                      plain->request.query.mmr == tree.request.query.mmr &&
                      plain->request.query.attributes == tree.request.query.attributes &&
                      plain->request.num_retries == tree.request.num_retries &&
                      plain->request.excluded_player_ids == tree.request.excluded_player_ids);
  }
  json body;
  try {
    body = parse_body(text);
  } catch (const bad_request& e) {
    mm::fuzz::require(std::string(e.what()).size() < 600);
    return 0;
  }
  refused_or_read([&] { read_query(body, profile, false); });
  refused_or_read([&] { read_query(body, profile, true); });
  refused_or_read([&] { read_row(body, profile, "players[0]"); });
  refused_or_read([&] { read_id_body(body); });
  if (body.is_object() && body.contains("players") && body["players"].is_array())
    for (std::size_t k = 0; k < body["players"].size() && k < 64; ++k)
      refused_or_read(
          [&] { read_row(body["players"][k], profile, "players[" + std::to_string(k) + "]"); });
  (void)describe(body);
  return 0;
}

void mm::fuzz::write_seeds(const std::string& dir) {
  const char* seeds[] = {
      R"({"attacker_id": 5, "mmr": 1500})",
      R"({"attacker_id": 5, "mmr": 1500, "attributes": {"region": 1, "guild": 7}, "retries": 2,
          "excluded_ids": [1, 2, 3]})",
      R"({"attacker_id": 5, "mmr": 1500, "attributes": [1, 7, 3, 0], "max_retries": 9})",
      R"({"id": 42, "mmr": 1234.5, "attributes": [1, 2, 3, 4], "is_bot": false, "payload": "x"})",
      R"({"players": [{"id": 1, "mmr": 1000}, {"id": 2, "mmr": 1e39}, {"id": 3, "mmr": 1e309}]})",
      R"({"id": 18446744073709551615})",
      R"({"attacker_id": -1, "mmr": "high", "attributes": {"nope": 1}})",
      R"([[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]])",
      R"({"attacker_id": 5, "mmr": 1500, "excluded_ids": [1e309, "a", null, {}]})",
      "{\"payload\": \"\xff\xfe\", \"id\": 1, \"mmr\": 1}",
  };
  int i = 0;
  for (const char* s : seeds) save(dir + "/seed-" + std::to_string(i++), s);
}
