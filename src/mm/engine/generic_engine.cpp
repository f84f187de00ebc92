#include "mm/engine/generic_engine.hpp"

namespace mm {

template class engine<generic_profile>;

}  // namespace mm
