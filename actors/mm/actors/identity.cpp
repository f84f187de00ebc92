#include "mm/actors/identity.hpp"

#include <algorithm>

namespace mm::actors {

std::string_view to_string(role r) {
  switch (r) {
    case role::none:
      return "none";
    case role::view:
      return "view";
    case role::test:
      return "test";
    case role::admin:
      return "admin";
  }
  return "none";
}

std::optional<std::string> bad_identity_name(const std::string& name) {
  if (name.empty() || name.size() > 64) return std::string("must be 1 to 64 characters");
  for (const char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
          c == '_' || c == '-'))
      return std::string("may hold only letters, digits, '.', '_' and '-'");
  for (const char* reserved : {open_identity, anonymous_identity, local_identity})
    if (name == reserved) return "'" + name + "' is a name the server keeps for itself";
  return std::nullopt;
}

identity_book::identity_book(std::vector<named_token> tokens, std::vector<named_peer> peers,
                             role anonymous_role)
    : peers_(std::move(peers)), anonymous_role_(anonymous_role), tokens_(std::move(tokens)) {}

const named_token* find_token(const std::vector<named_token>& tokens, std::string_view token) {
  const named_token* found = nullptr;
  for (const auto& t : tokens) {
    if (t.token.size() != token.size()) continue;
    unsigned char diff = 0;
    for (std::size_t i = 0; i < token.size(); ++i)
      diff |= static_cast<unsigned char>(t.token[i] ^ token[i]);
    if (diff == 0) found = &t;
  }
  return found;
}

std::optional<caller_identity> identity_book::by_token(std::string_view token) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (const named_token* t = find_token(tokens_, token))
    return caller_identity{t->name, t->granted};
  return std::nullopt;
}

caller_identity identity_book::by_common_name(const std::string& cn) const {
  for (const auto& p : peers_)
    if (p.common_name == cn) return {p.name, p.granted};
  return anonymous();
}

bool identity_book::bind(const caf::node_id& node, caller_identity who, const void* connection) {
  std::lock_guard<std::mutex> lock(mutex_);
  return nodes_.emplace(node, binding{std::move(who), connection, {}}).second;
}

void identity_book::unbind(const caf::node_id& node, const void* connection) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = nodes_.find(node);
  if (it != nodes_.end() && it->second.connection == connection) nodes_.erase(it);
}

bool identity_book::present(const caf::node_id& node, std::string_view token) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = nodes_.find(node);
  const named_token* t = find_token(tokens_, token);
  if (it == nodes_.end() || !t) return false;
  it->second.who = {t->name, t->granted};
  it->second.token = std::string(token);
  return true;
}

void identity_book::replace_tokens(std::vector<named_token> tokens) {
  std::lock_guard<std::mutex> lock(mutex_);
  tokens_ = std::move(tokens);
  for (auto& [node, b] : nodes_) {
    if (b.token.empty()) continue;
    if (const named_token* t = find_token(tokens_, b.token))
      b.who = {t->name, t->granted};
    else
      b.who.granted = role::none;
  }
}

std::vector<caller_identity> identity_book::token_identities() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<caller_identity> out;
  for (const auto& t : tokens_) out.push_back({t.name, t.granted});
  return out;
}

caller_identity identity_book::of(const caf::node_id& node) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = nodes_.find(node);
  if (it == nodes_.end()) return {anonymous_identity, role::none};
  return it->second.who;
}

std::size_t identity_book::bound() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return nodes_.size();
}

}  // namespace mm::actors
