// mmsim's lines on the terminal: a summary of each simulated day.
#pragma once

#include "mm/sim/async_day.hpp"
#include "mm/sim/session_day.hpp"

namespace mm::sim {

void print_session(const session_day_report& r);
void print_async(const async_day_report& r);

}  // namespace mm::sim
