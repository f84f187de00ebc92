// The async day's figures and checks, apart from its run (async_day.cpp):
// how evenly the offers were shared out, an hour's counts added to the
// day's, and the configuration refused before anything runs.
#pragma once

#include <cstdint>
#include <vector>

#include "mm/sim/async_day.hpp"

namespace mm::sim {

// How evenly `offers` (one count per player, `players` of them) were shared.
offer_fairness fairness_of(const std::vector<std::uint32_t>& offers, std::size_t players);

// The hour's counts (attacks, outcomes, joins, churn) added to `total`.
void add_counts(async_hour& total, const async_hour& hour);

// Throws errc::invalid_argument naming what is out of range, or a database
// file that exists already (the day creates its own, and a reference day's).
void check_async_day_config(const async_day_config& c);

}  // namespace mm::sim
