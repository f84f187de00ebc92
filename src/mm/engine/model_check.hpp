// The check of a model a caller hands the engine (an update, an enrolment),
// before it is cached.
#pragma once

#include <cmath>

#include "mm/engine/types.hpp"

namespace mm {

// Rejected: id 0, a model whose id is not the update's, a MMR that is not
// finite. Accepted: an empty result.
template <class Profile>
update_result check_model(player_id id, const typename Profile::model_type& m) {
  if (id == invalid_player) return {update_outcome::rejected, 0, "player id 0 is invalid"};
  if (Profile::id_of(m) != id)
    return {update_outcome::rejected, 0, "the model's id differs from the update's"};
  if (!std::isfinite(Profile::mmr_of(m))) return {update_outcome::rejected, 0, "MMR is not finite"};
  return {};
}

}  // namespace mm
