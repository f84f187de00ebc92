// What every store keeps of the configuration's versions
// (mm/storage/config_versions.hpp), checked the same way on SQLite
// (test_database.cpp) and PostgreSQL (test_pg_store.cpp): versions only
// added, newest first, and of two writers adding the same number, one.
#pragma once

#include <atomic>
#include <catch2/catch.hpp>
#include <thread>

#include "mm/storage/player_store.hpp"

namespace mm::test {

inline config_version version_of(const std::string& scope, std::int64_t n, std::string author) {
  return {scope,
          n,
          "{\"queues\": [" + std::to_string(n) + "], \"note\": \"quote \\\" and \\u00e9\"}",
          std::move(author),
          1'700'000'000'000 + n,
          "change " + std::to_string(n) + " (with 'quotes')"};
}

// `a` and `b`: two connections to one store.
inline void check_config_versions(player_store& a, player_store& b) {
  CHECK_FALSE(a.latest_config("sessions"));
  CHECK(a.config_history("sessions", 10).empty());
  CHECK_FALSE(a.append_config(version_of("sessions", 2, "ops")));  // not after 0
  REQUIRE(a.append_config(version_of("sessions", 1, "file")));
  CHECK_FALSE(b.append_config(version_of("sessions", 1, "ops")));  // taken
  REQUIRE(b.append_config(version_of("sessions", 2, "ops")));
  REQUIRE(a.append_config(version_of("profile", 1, "file")));  // scopes apart
  const auto latest = b.latest_config("sessions");
  REQUIRE(latest);
  CHECK(latest->version == 2);
  CHECK(latest->author == "ops");
  CHECK(latest->document == version_of("sessions", 2, "").document);
  CHECK(latest->comment == "change 2 (with 'quotes')");
  CHECK(latest->created_unix_ms == 1'700'000'000'002);
  const auto history = a.config_history("sessions", 10);
  REQUIRE(history.size() == 2);
  CHECK(history[0].version == 2);
  CHECK(history[1].version == 1);
  CHECK(history[1].author == "file");
  CHECK(a.config_history("sessions", 1).size() == 1);

  // Two writers racing for every next number: exactly one gets each, and
  // the versions stay 1, 2, 3... with no gap.
  std::atomic<int> won_a{0}, won_b{0};
  const auto race = [](player_store& s, std::atomic<int>& won, const char* who) {
    for (int i = 0; i < 60; ++i) {
      const auto now = s.latest_config("race");
      if (s.append_config(version_of("race", now ? now->version + 1 : 1, who))) ++won;
    }
  };
  std::thread ta([&] { race(a, won_a, "a"); });
  std::thread tb([&] { race(b, won_b, "b"); });
  ta.join();
  tb.join();
  const auto raced = a.config_history("race", 1000);
  CHECK(static_cast<int>(raced.size()) == won_a + won_b);
  for (std::size_t i = 0; i < raced.size(); ++i)
    CHECK(raced[i].version == static_cast<std::int64_t>(raced.size() - i));
}

}  // namespace mm::test
