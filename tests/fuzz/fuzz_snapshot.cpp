// Fuzz target: a stored snapshot, however damaged or crafted, is either
// restored into an engine whose invariants hold or refused with a reason;
// never a crash, a hang or an allocation beyond the payload's size.
//
// The first input byte picks the framing: odd, the rest is wrapped in a valid
// header (magic, version 1 or 2, length, checksum) so that the fuzzer reaches
// the decoder and the engine's restore behind the checksum; even, the rest is
// the stored payload as it is.
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_target.hpp"
#include "mm/engine/generic_engine.hpp"
#include "mm/engine/stable_hash.hpp"
#include "mm/engine/state_codec.hpp"
#include "mm/engine/synthetic_players.hpp"
#include "mm/storage/snapshot.hpp"

namespace {

std::string framed(std::string_view body, std::uint32_t version) {
  std::string out = "MMSS";
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((version >> (8 * i)) & 0xff));
  mm::detail::put_u64(out, body.size());
  mm::detail::put_u64(out, mm::fnv1a64(body));
  out += body;
  return out;
}

mm::options small_options() {
  mm::options o;
  o.player_cache_size = 2000;
  o.database_cache_size = 500;
  o.bucket_min_size = 1;
  o.bucket_initial_size = 64;
  o.mmr_bucket_count = 10;
  o.buckets_rebalance_sample_count = 10'000;
  o.random_seed = 1;
  return o;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  mm::stored_state stored;
  stored.payload = (data[0] & 1) ? framed(rest, 1 + ((data[0] >> 1) & 1)) : std::string(rest);
  mm::engine<mm::generic_profile> e(small_options(),
                                    mm::generic_profile(mm::demo_profile_config()));
  const auto report = mm::restore_stored(e, stored, 1'000'000);
  mm::fuzz::require(report.found);
  // Whatever was restored, the engine stays within its bounds and answers.
  const mm::engine_info info = e.info();
  mm::fuzz::require(info.players <= info.capacity);
  mm::fuzz::require(info.capacity <= e.capacity_limit());
  mm::match_request<mm::generic_query> q;
  q.query = mm::generic_query{1, 1500, {0, 0, 0, 0}};
  (void)e.find_match(q);
  return 0;
}

// Seeds: real snapshots of small filled engines (v2), and one in v1 framing.
void mm::fuzz::write_seeds(const std::string& dir) {
  mm::rng r(7);
  for (std::uint32_t players : {0u, 10u, 300u}) {
    mm::engine<mm::generic_profile> e(small_options(),
                                      mm::generic_profile(mm::demo_profile_config()));
    for (const auto& row : mm::make_players(mm::synthetic_population{}, players, 1, r))
      e.apply_row(row);
    e.rebalance(1234);
    const std::string bytes = mm::encode_snapshot(mm::take_snapshot(e));
    save(dir + "/snapshot-" + std::to_string(players), std::string(1, '\0') + bytes);
    // The same body behind a header the target makes (odd first byte).
    save(dir + "/body-" + std::to_string(players), "\x03" + bytes.substr(mm::detail::header_size));
  }
}
