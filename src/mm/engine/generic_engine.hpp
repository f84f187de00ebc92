// The engine of the generic profile, compiled once (generic_engine.cpp): a
// file that includes this header uses that copy instead of compiling the
// engine's members again (extern template), which keeps builds short.
#pragma once

#include "mm/engine/engine.hpp"
#include "mm/engine/generic_profile.hpp"

namespace mm {

extern template class engine<generic_profile>;
using generic_engine = engine<generic_profile>;

}  // namespace mm
