// The admin bridge: blocking calls into the matchmakers for threads that are not
// actors (the HTTP server's). Each call is one request with a timeout through a
// scoped actor (about 90 µs of overhead, fine for admin traffic); errors come
// back as caf::error, never as exceptions. Safe to use from many threads.
#pragma once

#include <caf/all.hpp>
#include <chrono>
#include <string>
#include <vector>

#include "mm/actors/interface.hpp"

namespace mm::actors {

template <class Profile>
class admin_bridge {
 public:
  using model = typename Profile::model_type;
  using query = typename Profile::query_type;
  using matchmaker = typename interfaces<Profile>::matchmaker;
  using client = typename interfaces<Profile>::routing_client;

  admin_bridge(caf::actor_system& sys, std::vector<matchmaker> set, std::vector<std::string> names,
               client c, std::chrono::milliseconds timeout)
      : sys_(sys),
        set_(std::move(set)),
        names_(std::move(names)),
        client_(std::move(c)),
        timeout_(timeout) {}

  std::size_t size() const { return set_.size(); }
  const std::vector<std::string>& names() const { return names_; }

  caf::expected<instance_info> info(std::size_t i) {
    return ask<instance_info>(set_[i], info_atom::value);
  }
  caf::expected<player_info> player(std::size_t i, player_id id) {
    return ask<player_info>(set_[i], player_atom::value, id);
  }
  caf::expected<std::vector<model>> inspect(std::size_t i, std::uint32_t bucket,
                                            std::uint32_t offset, std::uint32_t limit) {
    return ask<std::vector<model>>(set_[i], inspect_atom::value, bucket, offset, limit);
  }
  caf::expected<std::vector<model>> top(std::size_t i, std::uint32_t n) {
    return ask<std::vector<model>>(set_[i], top_atom::value, n);
  }
  caf::expected<rebalance_report> rebalance(std::size_t i) {
    return ask<rebalance_report>(set_[i], rebalance_atom::value);
  }
  caf::expected<bool> clear(std::size_t i) { return ask<bool>(set_[i], clear_atom::value); }
  caf::expected<query_explanation> explain(std::size_t i, const match_request<query>& r,
                                           std::uint32_t max_retries) {
    return ask<query_explanation>(set_[i], explain_atom::value, r, max_retries);
  }

  // Through the client: enrolls routed by id mod N, as a game's would be.
  // (Queries go through the query bridge, which does not block.)
  caf::expected<bool> enroll(player_id id) { return ask<bool>(client_, enroll_atom::value, id); }
  caf::expected<bool> remove(player_id id) { return ask<bool>(client_, remove_atom::value, id); }
  // The client's own counts: the game's view of its queries.
  caf::expected<client_stats> stats() { return ask<client_stats>(client_, stats_atom::value); }

  std::string render(const caf::error& e) const { return sys_.render(e); }

 private:
  template <class R, class Handle, class... Ts>
  caf::expected<R> ask(const Handle& h, const Ts&... xs) {
    caf::scoped_actor self{sys_};
    caf::expected<R> out{caf::make_error(caf::sec::request_timeout)};
    self->request(h, timeout_, xs...)
        .receive([&](R& r) { out = std::move(r); }, [&](caf::error& e) { out = std::move(e); });
    return out;
  }

  caf::actor_system& sys_;
  std::vector<matchmaker> set_;
  std::vector<std::string> names_;
  client client_;
  std::chrono::milliseconds timeout_;
};

}  // namespace mm::actors
