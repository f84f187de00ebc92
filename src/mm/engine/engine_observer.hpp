// What an engine was asked, seen from outside: every query it answered (with
// the answer) and every change a caller asked of its cache (updates,
// enrolments, removals), in the order the engine took them. For a recording
// of a game's own traffic that a replay runs again (docs/simulation.md,
// "Replay"). Scans, restores and the "why no match" tool are not traffic and
// are not seen.
//
// Called on the thread that called the engine, inside the call: an observer
// must not block and must not call the engine back.
#pragma once

#include <span>

#include "mm/engine/types.hpp"

namespace mm {

template <class Profile>
class engine_observer {
 public:
  using model_type = typename Profile::model_type;
  using request_type = match_request<typename Profile::query_type>;
  using response_type = match_response<model_type>;

  virtual ~engine_observer() = default;
  virtual void answered(const request_type& request, const response_type& response) = 0;
  virtual void updated(player_id id, std::span<const model_type> models) = 0;
  virtual void enrolled(std::span<const model_type> models) = 0;
  virtual void removed(player_id id) = 0;
};

}  // namespace mm
