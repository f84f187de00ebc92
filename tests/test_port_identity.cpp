// The identity model on the actor port (docs/security.md): each connection
// acts as its token's identity (hello), its TLS certificate's, or the
// anonymous one; a second identity cannot read, list, cancel, close or
// replace what the first created, and an admin can. Each peer is an actor
// system of its own (CAF names a connection by its node), against a real
// matchmakerd.
#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <memory>
#include <string>

#include "mm/actors/errors.hpp"
#include "mm/actors/generic_actors.hpp"
#include "mm/actors/permissions.hpp"
#include "mm/actors/registration.hpp"
#include "mm/actors/remote.hpp"
#include "mm/session/public_id.hpp"
#include "session_http.hpp"
#include "test_certificates.hpp"

using namespace mm;
using namespace mm::test;
using namespace std::chrono_literals;
using Catch::Matchers::Contains;
using service = actors::session_interfaces::service;
using async_handle = actors::interfaces<generic_profile>::routing_client;

namespace {

// A game process with its own node: connected with `token` (none: anonymous).
struct port_peer {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  caf::expected<service> sessions = caf::error{};

  port_peer(std::uint16_t port, const std::string& token, const actors::actor_tls& tls = {}) {
    actors::use_network(cfg, tls);
    cfg.set("logger.verbosity", caf::atom("quiet"));
    actors::add_message_types<generic_profile>(cfg, "generic");
    sys = std::make_unique<caf::actor_system>(cfg);
    sessions = actors::connect_actor<service>(*sys, "127.0.0.1", port, tls.enabled(), token);
  }

  // The answer to `xs` as T, or its error.
  template <class T, class... Ts>
  caf::expected<T> ask(Ts&&... xs) {
    caf::scoped_actor self{*sys};
    caf::expected<T> out = caf::error{};
    self->request(*sessions, 10s, std::forward<Ts>(xs)...)
        .receive([&](T& x) { out = std::move(x); }, [&](caf::error& e) { out = std::move(e); });
    return out;
  }
  template <class T, class Handle, class... Ts>
  caf::expected<T> ask_async(const Handle& h, Ts&&... xs) {
    caf::scoped_actor self{*sys};
    caf::expected<T> out = caf::error{};
    self->request(h, 10s, std::forward<Ts>(xs)...)
        .receive([&](T& x) { out = std::move(x); }, [&](caf::error& e) { out = std::move(e); });
    return out;
  }
};

actors::session_ticket solo_ticket(player_id id, bool replace = false) {
  actors::session_ticket t;
  actors::session_player p;
  p.id = id;
  p.mmr = 1500;
  p.rtt_ms = {{"paris", 20}, {"tokyo", 240}};
  t.players = {p};
  t.replace_existing = replace;
  t.credential = "ops";  // a peer may claim anything: the port sets the connection's
  return t;
}

template <class T>
std::optional<errc> code_of(const caf::expected<T>& x) {
  return x ? std::nullopt : error_code_of(x.error());
}

std::uint64_t create_ticket(port_peer& p, player_id id) {
  auto made = p.ask<std::uint64_t>(actors::create_atom::value, std::string("coop"), solo_ticket(id),
                                   actors::session_interfaces::owner{});
  REQUIRE(made);
  return *made;
}

}  // namespace

TEST_CASE(
    "actor port, plain: a second identity cannot read, list, cancel, close or replace "
    "what the first created, and an admin can",
    "[server][session][security]") {
  json patch = session_patch();
  patch["actor"] = {{"port", 0}};
  live_server s(patch, 100);
  REQUIRE(s.actor_port() != 0);
  port_peer a(s.actor_port(), test_token);        // game-a, test
  port_peer b(s.actor_port(), other_test_token);  // game-b, test
  port_peer ops(s.actor_port(), admin_token);     // ops, admin
  port_peer viewer(s.actor_port(), view_token);   // viewer, view
  port_peer anonymous(s.actor_port(), "");        // actor.anonymous_role: test
  REQUIRE((a.sessions && b.sessions && ops.sessions && viewer.sessions && anonymous.sessions));

  // A token the server does not know fails the connect.
  port_peer stranger(s.actor_port(), "not-a-token-of-this-server");
  REQUIRE_FALSE(stranger.sessions);
  CHECK(error_code_of(stranger.sessions.error()) == errc::forbidden);

  const std::uint64_t t = create_ticket(a, 101);
  // Tickets: the owner reads its own under its name, nothing derived from a token.
  auto own = a.ask<actors::ticket_outcome>(actors::status_atom::value, t);
  REQUIRE(own);
  CHECK(own->credential == "game-a");
  CHECK(code_of(b.ask<actors::ticket_outcome>(actors::status_atom::value, t)) == errc::not_found);
  CHECK(code_of(b.ask<bool>(actors::cancel_atom::value, t)) == errc::not_found);
  CHECK(code_of(b.ask<bool>(actors::cancel_atom::value, t, std::string("game-a"))) ==
        errc::not_found);  // naming the owner's credential changes nothing
  CHECK(code_of(b.ask<std::vector<session::explanation>>(
            actors::explain_atom::value, t, std::uint32_t{10}, std::string())) == errc::not_found);
  // Replacing another identity's ticket: refused naming the player, not the ticket.
  auto replaced = b.ask<std::uint64_t>(actors::create_atom::value, std::string("coop"),
                                       solo_ticket(101, true), actors::session_interfaces::owner{});
  REQUIRE_FALSE(replaced);
  CHECK(error_code_of(replaced.error()) == errc::conflict);
  const std::string why = b.sys->render(replaced.error());
  CHECK_THAT(why, Contains("another owner"));
  CHECK(why.find(session::format_public_id(t)) == std::string::npos);
  REQUIRE(a.ask<actors::ticket_outcome>(actors::status_atom::value, t));  // still waiting
  // Listing: another's ticket without its id and players; one's own with them.
  const auto listed = [&](port_peer& p) {
    auto page = p.ask<std::vector<actors::waiting_ticket_view>>(
        actors::inspect_atom::value, std::string("coop"), std::uint32_t{0}, std::uint32_t{100});
    REQUIRE(page);
    REQUIRE(page->size() == 1);
    return page->front();
  };
  CHECK(listed(b).ticket == 0);
  CHECK(listed(b).players.empty());
  CHECK(listed(a).ticket == t);
  CHECK(listed(ops).ticket == t);
  CHECK(listed(viewer).ticket == 0);

  // A viewer reads counts but creates nothing and finds no one.
  CHECK(viewer.ask<std::vector<actors::session_queue_report>>(actors::info_atom::value));
  auto refused = viewer.ask<std::uint64_t>(actors::create_atom::value, std::string("coop"),
                                           solo_ticket(102), actors::session_interfaces::owner{});
  CHECK(code_of(refused) == errc::forbidden);
  CHECK_THAT(viewer.sys->render(refused.error()), Contains("ticket_create: needs role test"));
  auto async = caf::actor_cast<async_handle>(*viewer.sessions);
  match_request<generic_query> q;
  q.query = generic_query{1'000'000, 1500, {2, 1, 0, 0}};
  CHECK(code_of(viewer.ask_async<match_reply<generic_model>>(async, actors::find_atom::value, q)) ==
        errc::forbidden);
  // The anonymous connection is its own identity, at the configured role.
  const std::uint64_t anon = create_ticket(anonymous, 103);
  auto anon_status = anonymous.ask<actors::ticket_outcome>(actors::status_atom::value, anon);
  REQUIRE(anon_status);
  CHECK(anon_status->credential == actors::anonymous_identity);
  CHECK(code_of(a.ask<actors::ticket_outcome>(actors::status_atom::value, anon)) ==
        errc::not_found);

  // Lobbies: registered as the caller; another cannot update or close it.
  actors::lobby_registration l;
  l.id = "lobby-a";
  l.mode = "ctf";
  l.datacenter = "paris";
  l.max_players = 8;
  l.credential = "game-b";  // claimed, ignored
  REQUIRE(a.ask<bool>(actors::lobby_atom::value, actors::create_atom::value, l));
  CHECK(code_of(b.ask<bool>(actors::lobby_atom::value, actors::update_atom::value,
                            std::string("lobby-a"), std::uint32_t{3}, std::string("game-a"))) ==
        errc::not_found);
  CHECK(*b.ask<bool>(actors::lobby_atom::value, actors::close_atom::value, std::string("lobby-a"),
                     std::string()) == false);
  CHECK(*a.ask<bool>(actors::lobby_atom::value, actors::update_atom::value, std::string("lobby-a"),
                     std::uint32_t{3}, std::string()));

  // The admin reads and cancels another's ticket: before the running match
  // below is registered, whose open slots the queue's next tick may fill
  // with this very ticket (on a slow run it did, and the cancel found it
  // matched).
  CHECK(ops.ask<actors::ticket_outcome>(actors::status_atom::value, t));
  CHECK(*ops.ask<bool>(actors::cancel_atom::value, t));

  // Running matches (backfill): another's is not found; an admin's reach is all.
  actors::backfill_registration m;
  m.queue = "coop";
  m.match_id = "match-a";
  m.datacenter = "paris";
  m.server = "10.0.0.2:7777";
  actors::session_player seated;
  seated.id = 150;
  seated.mmr = 1500;
  seated.rtt_ms = {{"paris", 20}};
  m.teams = {{seated}};
  auto registered =
      a.ask<actors::backfill_state>(actors::backfill_atom::value, actors::create_atom::value, m);
  REQUIRE(registered);
  CHECK(registered->registration.credential == "game-a");
  CHECK(code_of(b.ask<actors::backfill_state>(actors::backfill_atom::value,
                                              actors::status_atom::value, std::string("match-a"),
                                              std::string())) == errc::not_found);
  CHECK(code_of(b.ask<bool>(actors::backfill_atom::value, actors::close_atom::value,
                            std::string("match-a"), std::string("game-a"))) == errc::not_found);
  auto b_list = b.ask<std::vector<actors::backfill_state>>(
      actors::backfill_atom::value, actors::inspect_atom::value, std::string(), std::string());
  REQUIRE(b_list);
  CHECK(b_list->empty());
  CHECK(ops.ask<actors::backfill_state>(actors::backfill_atom::value, actors::status_atom::value,
                                        std::string("match-a"), std::string()));
  CHECK(*ops.ask<bool>(actors::backfill_atom::value, actors::close_atom::value,
                       std::string("match-a"), std::string()));

  // The admin closes another's lobby.
  CHECK(*ops.ask<bool>(actors::lobby_atom::value, actors::close_atom::value, std::string("lobby-a"),
                       std::string()));
}

TEST_CASE("actor port, mutual TLS: each certificate is the identity actor.peers maps it to",
          "[server][session][security][tls]") {
  certificates certs;
  const actors::actor_tls server_tls = certs.node("server");
  json patch = session_patch();
  patch["actor"] = {
      {"port", 0},
      {"tls",
       {{"certificate", server_tls.certificate}, {"key", server_tls.key}, {"ca", server_tls.ca}}},
      {"anonymous_role", "none"},
      {"peers",
       {{{"common_name", "game"}, {"name", "game-a"}, {"role", "test"}},
        {{"common_name", "game2"}, {"name", "game-b"}, {"role", "test"}}}}};
  live_server s(patch, 100);
  REQUIRE(s.actor_port() != 0);
  port_peer a(s.actor_port(), "", certs.node("game"));
  port_peer b(s.actor_port(), "", certs.node("game2"));
  port_peer unmapped(s.actor_port(), "", certs.node("game3"));
  REQUIRE((a.sessions && b.sessions && unmapped.sessions));

  const std::uint64_t t = create_ticket(a, 201);
  auto own = a.ask<actors::ticket_outcome>(actors::status_atom::value, t);
  REQUIRE(own);
  CHECK(own->credential == "game-a");  // the same name a token named game-a has over HTTP
  CHECK(code_of(b.ask<actors::ticket_outcome>(actors::status_atom::value, t)) == errc::not_found);
  CHECK(code_of(b.ask<bool>(actors::cancel_atom::value, t)) == errc::not_found);
  // A certificate the CA signed but the config does not map: the anonymous
  // role, here none.
  CHECK(code_of(unmapped.ask<std::vector<actors::session_queue_report>>(
            actors::info_atom::value)) == errc::forbidden);
  // The same HTTP token's identity is the same owner: its token sees the ticket.
  CHECK(s.get_json("/api/tickets/" + session::format_public_id(t), test_token)["state"] ==
        "waiting");
  httplib::Client c("127.0.0.1", s.port());
  CHECK(c.Get("/api/tickets/" + session::format_public_id(t),
              {{"Authorization", "Bearer " + other_test_token}})
            ->status == 404);
  CHECK(*a.ask<bool>(actors::cancel_atom::value, t));
}

TEST_CASE("docs/security.md lists every operation with its role", "[security][docs]") {
  std::ifstream in(std::string(MM_SOURCE_DIR) + "/docs/security.md");
  REQUIRE(in);
  std::map<std::string, std::string> documented;  // operation -> role
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("| ", 0) != 0) continue;
    const auto cell = [&](std::size_t i) {
      std::size_t at = 0;
      for (std::size_t k = 0; k <= i; ++k) at = line.find('|', at) + 1;
      const std::size_t end = line.find('|', at);
      std::string c = line.substr(at, end - at);
      c.erase(0, c.find_first_not_of(' '));
      c.erase(c.find_last_not_of(' ') + 1);
      return c;
    };
    documented[cell(0)] = cell(1);
  }
  for (const auto& p : actors::permissions) {
    INFO(p.name);
    REQUIRE(documented.count(std::string(p.name)) == 1);
    CHECK(documented[std::string(p.name)] == actors::to_string(p.needed));
  }
}
