// The single query's hot path, read and written without a JSON tree: what
// every client sends for a find (POST /api/query, MM.FIND) costs a few
// hundred nanoseconds instead of a tree of small allocations each way.
//
// Both functions only take the shape they are sure of and say "nothing"
// otherwise; the caller then uses parse_body, read_query and reply_json,
// which answer exactly as before (the same value, the same error words).
// So this is an accelerator, never a second set of rules: a property test
// (tests/test_query_text.cpp) checks over random and mutated bodies that
// whenever it answers, it answers what the tree would.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "json_codec.hpp"

namespace mm::server {

// A single query, when `text` is a plain JSON object of the query's fields
// (attacker_id, mmr, attributes as a list or by name, retries,
// excluded_ids) with plain numbers, each field once; nothing for anything
// else, valid or not (a batch, max_retries, a duplicate key, an escape, a
// number out of range, an error to name).
std::optional<query_body> read_plain_query(std::string_view text, const generic_profile_config& p);

// reply_json(r, p).dump(): byte for byte the same text; nothing when the
// reply carries an error text or the profile's names would need escaping.
std::optional<std::string> reply_text(const match_reply<generic_model>& r,
                                      const generic_profile_config& p);

}  // namespace mm::server
