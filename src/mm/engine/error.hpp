// The project's errors: one enum of causes, and one exception type carrying
// it. The rule (docs/architecture.md, "Errors"): a function that cannot do its
// job throws mm::error (or a subclass) with the cause and a sentence naming
// what failed; third-party exceptions (SQLite, cereal, OpenSSL) are caught at
// the library that calls them and rethrown as mm::error; across actors the
// same cause travels as a caf::error of category "mm" (mm/actors/errors.hpp).
// Answers that are part of the protocol (NoneFound, InvalidRequest) are not
// errors.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace mm {

// Never 0: CAF reads code 0 as "no error".
enum class errc : std::uint8_t {
  invalid_config = 1,  // options, profile or server configuration unusable
  invalid_argument,    // a caller passed a value the function cannot take
  database,            // the database failed: missing, locked, damaged, full, newer schema
  snapshot,            // a snapshot could not be read back
  no_instances,        // a client was given no matchmaker instance
  instance_down,       // the instance is restarting after a crash
  not_owned_here,      // the player's shard is run by another node of the cluster
  no_available_lobby,  // no running lobby fits and the request forbids creating one
  not_found,           // what the request names does not exist (or is not the caller's)
  conflict,            // the request clashes with the state: a player who waits already
  system_failure,      // the operating system refused a call (random source, files)
  limit_reached,       // a bound of the server's (lobbies held, per credential) is reached
  fenced,              // a write of a node that no longer holds the lease on what it writes
  forbidden,           // the caller's identity may not do this (its role is too low)
};

std::string_view to_string(errc e);

class error : public std::runtime_error {
 public:
  error(errc code, const std::string& what) : std::runtime_error(what), code_(code) {}
  errc code() const { return code_; }

 private:
  errc code_;
};

}  // namespace mm
