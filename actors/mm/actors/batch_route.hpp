// A batch of queries through an instance set, routed as single queries are
// (router.hpp): the whole batch goes to one member; the queries it found none
// for go on, together, to the next member, until each is answered or every
// member was asked. A few messages per batch, not two per query. Used by the
// routing client actor (a game's batch) and by the query bridge (the HTTP
// server's queries).
//
// Only the last member asked may make fake opponents, and only for the
// queries whose caller allows them. A member that fails or does not answer
// within `timeout` is passed over; when the last one fails, the open queries
// are NoneFound if some member found none for them, else the batch fails.
#pragma once

#include <caf/all.hpp>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "mm/actors/interface.hpp"

namespace mm::actors {

template <class Profile>
struct batch_route {
  using request_type = match_request<typename Profile::query_type>;
  using reply_type = match_reply<typename Profile::model_type>;

  std::vector<request_type> requests;
  std::vector<reply_type> replies;  // the answers, in the order of `requests`
  std::vector<std::uint32_t> open;  // indices of the queries not answered yet
  std::size_t first = 0;            // the member asked first
  bool someone_said_none = false;

  batch_route(std::vector<request_type> batch, std::size_t first_member)
      : requests(std::move(batch)),
        replies(requests.size()),
        open(requests.size()),
        first(first_member) {
    for (std::uint32_t i = 0; i < open.size(); ++i) open[i] = i;
  }
};

// Asks member (first + hop) mod N for every open query of `job`; `members`
// must outlive the batch (the caller's actor state holds them). Calls
// `done(caf::error{})` once every query has its reply in job->replies, or
// `done(e)` with the last member's error (job->open then holds the queries
// nobody answered).
template <class Profile, class Self, class Members, class Done>
void route_batch(Self* self, const Members& members, std::shared_ptr<batch_route<Profile>> job,
                 std::size_t hop, caf::duration timeout, Done done) {
  using reply_type = typename batch_route<Profile>::reply_type;
  const std::size_t n = members.size();
  const bool last = hop + 1 == n;
  std::vector<typename batch_route<Profile>::request_type> ask;
  ask.reserve(job->open.size());
  for (const std::uint32_t i : job->open) {
    ask.push_back(job->requests[i]);
    ask.back().allow_fake_opponent = last && job->requests[i].allow_fake_opponent;
  }
  const auto& member = members[(job->first + hop) % n];
  self->request(member, timeout, find_atom::value, std::move(ask))
      .then(
          [=, &members](std::vector<reply_type>& got) mutable {
            std::vector<std::uint32_t> still;
            for (std::size_t k = 0; k < job->open.size(); ++k) {
              const std::uint32_t i = job->open[k];
              // A member that answers short has not answered the rest.
              if (k >= got.size() || (got[k].type == match_type::none_found && !last))
                still.push_back(i);
              else
                job->replies[i] = std::move(got[k]);
            }
            if (!still.empty()) job->someone_said_none = true;
            job->open = std::move(still);
            // After the last member, what is still open (a short answer) stays NoneFound.
            if (job->open.empty() || last)
              done(caf::error{});
            else
              route_batch<Profile>(self, members, std::move(job), hop + 1, timeout,
                                   std::move(done));
          },
          [=, &members](caf::error& e) mutable {
            if (!last)
              route_batch<Profile>(self, members, std::move(job), hop + 1, timeout,
                                   std::move(done));
            else if (job->someone_said_none)
              done(caf::error{});  // the open ones: NoneFound
            else
              done(std::move(e));
          });
}

}  // namespace mm::actors
