// Who may call the admin API: the caller's role from its bearer token, and
// the checks that keep another site's web page from using a browser against
// the API. Everything here reads a request's head only, so a refusal comes
// before any body byte is read.
#pragma once

#include <optional>
#include <string>

#include "http_server.hpp"
#include "mm/actors/identity.hpp"
#include "mm/actors/session_journal.hpp"
#include "server_config.hpp"

namespace mm::server {

// What a caller is checked against: the configuration (whether tokens are
// configured at all, which a reload cannot change) and the identities in
// force now (their tokens replaced by a reload; mm/actors/identity.hpp).
struct access_rules {
  const server_config& config;
  const actors::identity_book& identities;
};

// The caller's role: admin for everyone when no token is configured (the
// server is then bound to loopback only), else the role of the bearer token;
// role::none without a valid one. Tokens are compared in constant time.
role caller_role(const access_rules& rules, const http_request& req);

// Who the caller is, for what it creates (tickets, running matches, lobbies)
// and may then read and change: "open" when no token is configured, else its
// token's name (mm/actors/identity.hpp; nothing derived from the secret).
// Call it only for a caller whose role was checked.
std::string caller_credential(const access_rules& rules, const http_request& req);

// What an earlier version stored as the owner of an HTTP token's tickets and
// running matches ("token:" and a 64-bit hash of the token) becomes that
// token's name, so that a server upgraded in place keeps their owners. Other
// owners are left as they are.
void adopt_token_names(const server_config& config, actors::session_journal_contents& restored);

// Why a request looks like another site's (a foreign Host, Origin or a
// browser's cross-site fetch), or nothing when it does not. See access.cpp.
std::optional<std::string> foreign_request(const server_config& config, const http_request& req);

// Caller-supplied text quoted in an error message, clipped to 64 characters.
std::string clipped(const std::string& s);

}  // namespace mm::server
