// A game's own actors include mm/actors/interface.hpp alone: it must compile
// on its own, and bring in no database header (the build fails here if it
// ever does again) and no CAF runtime beyond the typed-actor headers.
#include "mm/actors/interface.hpp"

#ifdef SQLITECPP_HAVE_STD_FILESYSTEM
#error "mm/actors/interface.hpp includes SQLiteCpp: the game-facing header must stay light"
#endif

#include <catch2/catch.hpp>

namespace {
using iface = mm::actors::interfaces<mm::generic_profile>;
}  // namespace

// Whether every handler of `Small` is one of `Large` (a handle of `Large`
// can then stand in for `Small`).
template <class Small, class Large>
constexpr bool handlers_within =
    caf::detail::tl_subset_of<typename Small::signatures, typename Large::signatures>::value;

TEST_CASE("the game-facing actor header stands alone", "[actors][layout]") {
  // What a game holds: an instance or a supervisor can stand in for the
  // client interface, and a routing client too; not the other way round.
  STATIC_REQUIRE(handlers_within<iface::client, iface::matchmaker>);
  STATIC_REQUIRE(handlers_within<iface::client, iface::routing_client>);
  STATIC_REQUIRE_FALSE(handlers_within<iface::matchmaker, iface::client>);
  // Enroll and remove are two messages with two atoms.
  CHECK(mm::actors::enroll_atom::value != mm::actors::remove_atom::value);
}
