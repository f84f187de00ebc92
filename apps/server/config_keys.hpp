// The table of matchmakerd's configuration keys (server_config.cpp): each
// key's kind, default, help, and how it is set and read back. The session
// matchmaker's keys (sessions.*) live in session_keys.cpp.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "config_values.hpp"
#include "server_config.hpp"

namespace mm::server {

enum class kind { text, integer, number, boolean, duration, threshold, list };

struct key_spec {
  std::string name;
  kind type;
  std::string default_text;
  std::string help;
  std::function<void(server_config&, const json&)> set;
  std::function<json(const server_config&)> get;  // the effective value, for --print-config
};

// Readers of list-valued keys (config_readers.cpp).
std::vector<generic_attribute> as_attributes(const std::string& key, const json& v);
std::vector<access_token> as_tokens(const std::string& key, const json& v);
json hidden_tokens(const std::vector<access_token>& tokens);
// "view", "test", "admin" (and "none" when `none_allowed`).
role as_role(const std::string& key, const json& v, bool none_allowed = false);
std::vector<actors::named_peer> as_peers(const std::string& key, const json& v);
json peers_json(const std::vector<actors::named_peer>& peers);
std::vector<std::uint32_t> parse_index_list(const std::string& key, const std::string& text);
std::string index_list_text(const std::vector<std::uint32_t>& list);

// The keys given, followed by the sessions.* keys.
std::vector<key_spec> with_session_keys(std::vector<key_spec> keys);
// The keys given, followed by the record_queries.* keys (recording_keys.cpp).
std::vector<key_spec> with_recording_keys(std::vector<key_spec> keys);
// The keys given, followed by the log.* keys (log_keys.cpp).
std::vector<key_spec> with_log_keys(std::vector<key_spec> keys);
// The keys given, followed by the resp.* keys (resp_keys.cpp).
std::vector<key_spec> with_resp_keys(std::vector<key_spec> keys);

}  // namespace mm::server
