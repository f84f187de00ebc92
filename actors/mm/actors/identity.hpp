// Who a caller is, the same model at every door (HTTP, its WebSocket, the
// actor port): a name from the configuration and a role. The name is what
// owns what the caller creates (tickets, running matches, lobbies) and what
// others may be shown; a token's secret never leaves this file.
//
// Where an identity comes from:
// - HTTP: the bearer token (`tokens[i]`, its `name` and `role`);
// - the actor port: the token a connection presents with `(hello, token)`
//   (connect_actor sends it first), else the common name of its TLS
//   certificate as `actor.peers` maps it, else the anonymous identity
//   (`actor.anonymous_role`, default test);
// - an actor of the server's own process: `local`, an admin.
//
// The actor port's connections are bound here by the node id each one
// announces in its handshake (port_guard.cpp): one node id, one connection.
// CAF 0.17 names a message's sender by its node, so the node is what a
// message's identity is read from (game_front.hpp).
#pragma once

#include <caf/node_id.hpp>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace mm::actors {

// Each role includes the ones before it.
enum class role : std::uint8_t { none, view, test, admin };

std::string_view to_string(role r);

struct caller_identity {
  std::string name;
  role granted = role::none;
};

// The names the model keeps for itself: no token or peer may take them.
inline constexpr const char* open_identity = "open";            // HTTP without tokens
inline constexpr const char* anonymous_identity = "anonymous";  // a port peer without one
inline constexpr const char* local_identity = "local";          // the server's own actors

// A bearer token of the config, with the identity it grants.
struct named_token {
  std::string token, name;
  role granted = role::view;
};

// A certificate's subject common name (CN) on the TLS actor port, mapped to
// an identity.
struct named_peer {
  std::string common_name, name;
  role granted = role::view;
};

// The token among `tokens` equal to `token`, or null. Every token is compared
// in full, so the time does not tell how much of a guess matched.
const named_token* find_token(const std::vector<named_token>& tokens, std::string_view token);

// Why `name` cannot name an identity (empty, too long, a character outside
// [A-Za-z0-9._-], a reserved name), or nothing.
std::optional<std::string> bad_identity_name(const std::string& name);

class identity_book {
 public:
  identity_book(std::vector<named_token> tokens, std::vector<named_peer> peers,
                role anonymous_role);

  // The token's identity, or nothing. Every configured token is compared in
  // full, so the time does not tell how much of a guess matched.
  std::optional<caller_identity> by_token(std::string_view token) const;
  // The identity of a TLS peer by its certificate's common name; unmapped:
  // the anonymous one.
  caller_identity by_common_name(const std::string& cn) const;
  caller_identity anonymous() const { return {anonymous_identity, anonymous_role_}; }

  // The tokens in force from now on (a reload: SIGHUP or POST
  // /api/admin/tokens/reload). A connection that presented a token keeps
  // the identity that token now grants: its new role, or role none (refused
  // everything) when the token is gone; it says hello again with a current
  // one, or reconnects.
  void replace_tokens(std::vector<named_token> tokens);
  // The names and roles in force (no secrets).
  std::vector<caller_identity> token_identities() const;

  // The port's connections. `connection` tags the binding, so that only the
  // connection that made it ends it. False: the node is bound already (to
  // another connection: CAF would treat both as one peer).
  bool bind(const caf::node_id& node, caller_identity who, const void* connection);
  void unbind(const caf::node_id& node, const void* connection);
  // A connection's identity after a `(hello, token)`: the token's; false
  // when the node has no connection now or the token is not one in force.
  bool present(const caf::node_id& node, std::string_view token);
  // The identity of a message from `node`: role none for a node with no
  // connection on the port (it cannot be told apart from anyone).
  caller_identity of(const caf::node_id& node) const;
  std::size_t bound() const;

 private:
  struct binding {
    caller_identity who;
    const void* connection = nullptr;
    std::string token;  // the token it presented; empty: its certificate's or anonymous
  };
  std::vector<named_peer> peers_;
  role anonymous_role_;
  mutable std::mutex mutex_;  // over the tokens and the bindings
  std::vector<named_token> tokens_;
  std::unordered_map<caf::node_id, binding> nodes_;
};

}  // namespace mm::actors
