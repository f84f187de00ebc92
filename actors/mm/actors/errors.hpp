// The project's error causes (mm::errc) across actors: a caf::error of
// category "mm" whose code is the errc and whose context is the sentence. An
// actor that catches an mm::error replies with make_error(e.code(), e.what());
// a caller reads the cause back with error_code_of().
#pragma once

#include <caf/actor_system_config.hpp>
#include <caf/atom.hpp>
#include <caf/error.hpp>
#include <caf/make_message.hpp>
#include <optional>
#include <string>

#include "mm/actors/messages.hpp"
#include "mm/engine/error.hpp"

namespace mm {

inline constexpr caf::atom_value error_category = caf::atom("mm");

// Found by CAF through argument-dependent lookup, as for its own enums.
inline caf::error make_error(errc code, std::string what) {
  return caf::error(static_cast<std::uint8_t>(code), error_category,
                    caf::make_message(std::move(what)));
}

// The cause of an error made by make_error above; nothing for CAF's own
// errors (timeouts, a receiver that is down...).
inline std::optional<errc> error_code_of(const caf::error& e) {
  if (!e || e.category() != error_category || e.code() == 0) return std::nullopt;
  return static_cast<errc>(e.code());
}

// The answer to a batch of more than max_batch_queries queries.
inline caf::error batch_too_large(std::size_t n) {
  return make_error(
      errc::invalid_argument,
      "a batch of " + std::to_string(n) + " queries; at most " + std::to_string(max_batch_queries));
}

// Lets actor_system::render() print "mm.database: cannot ..." for these errors.
inline void add_error_category(caf::actor_system_config& cfg) {
  cfg.add_error_category(
      error_category, [](std::uint8_t code, caf::atom_value, const caf::message& context) {
        std::string out = "mm." + std::string(to_string(static_cast<errc>(code)));
        if (context.match_elements<std::string>()) out += ": " + context.get_as<std::string>(0);
        return out;
      });
}

}  // namespace mm
