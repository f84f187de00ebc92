#include "mm/actors/session_fan_out.hpp"

#include <algorithm>
#include <caf/all.hpp>
#include <chrono>
#include <memory>

#include "mm/actors/errors.hpp"
#include "mm/actors/interface.hpp"

namespace mm::actors {

namespace {

// Long enough for a partition that is busy writing; an answer that never
// comes (a partition stuck) still ends the gathering, with its error.
constexpr auto gather_timeout = std::chrono::seconds(30);

template <class T>
struct answers {
  std::vector<T> values;
  std::vector<caf::error> errors;
  std::size_t left = 0;
  bool elsewhere = false;  // partitions this node does not run may have it
};

// The merged answer of every partition, as a message for the caller.
template <class T>
struct is_list : std::false_type {};
template <class T>
struct is_list<std::vector<T>> : std::true_type {};

// Lists are concatenated (every_queue, every_match); anything else is the
// answer of the partition that has it.
template <class T>
caf::message merge_answers(answers<T>& a) {
  if constexpr (!is_list<T>::value) {
    if (!a.values.empty()) {
      T found = a.values.front();
      return caf::make_message(std::move(found));
    }
    // Not found anywhere, unless a partition failed otherwise: then it may
    // be the one, and its error is the truth.
    const auto other = std::find_if(a.errors.begin(), a.errors.end(), [](const caf::error& e) {
      return error_code_of(e) != errc::not_found;
    });
    if (other != a.errors.end()) return caf::make_message(*other);
    if (a.elsewhere)
      return caf::make_message(make_error(
          errc::not_owned_here,
          "match_id: no such running match in the session partitions this node runs: ask "
          "the node that runs its queue"));
    return caf::make_message(a.errors.front());
  } else {
    if (!a.errors.empty()) return caf::make_message(a.errors.front());
    T all;
    for (auto& v : a.values)
      all.insert(all.end(), std::make_move_iterator(v.begin()), std::make_move_iterator(v.end()));
    if constexpr (std::is_same_v<T, std::vector<session_queue_report>>)
      std::sort(all.begin(), all.end(),
                [](const auto& x, const auto& y) { return x.queue < y.queue; });
    return caf::make_message(std::move(all));
  }
}

template <class T>
void gather(caf::event_based_actor* self, std::vector<caf::actor> services, caf::message request,
            caf::strong_actor_ptr reply_to, caf::message_id mid, bool elsewhere) {
  auto a = std::make_shared<answers<T>>();
  a->left = services.size();
  a->elsewhere = elsewhere;
  auto one_more = [self, a, reply_to, mid] {
    if (--a->left > 0) return;
    reply_to->enqueue(self->ctrl(), mid.response_id(), merge_answers(*a), self->context());
    self->quit();
  };
  for (const auto& s : services)
    self->request(s, gather_timeout, request)
        .then(
            [a, one_more](T& x) {
              a->values.push_back(std::move(x));
              one_more();
            },
            [a, one_more](caf::error& e) {
              a->errors.push_back(std::move(e));
              one_more();
            });
}

// What a running match's request answers: backfill_atom, then the verb.
template <class F>
void by_answer_type(const caf::message& request, F&& f) {
  const auto verb = request.get_as<caf::atom_value>(1);
  if (verb == close_atom::value)
    f(bool{});
  else if (verb == explain_atom::value)
    f(session::explanation{});
  else
    f(backfill_state{});  // status, confirm, release
}

}  // namespace

void fan_out(caf::actor_system& sys, std::vector<caf::actor> services, caf::message request,
             fan_out_merge merge, caf::strong_actor_ptr reply_to, caf::message_id mid,
             bool elsewhere) {
  auto start = [&](auto typed) {
    using T = decltype(typed);
    sys.spawn([services = std::move(services), request = std::move(request),
               reply_to = std::move(reply_to), mid,
               elsewhere](caf::event_based_actor* self) mutable {
      gather<T>(self, std::move(services), std::move(request), std::move(reply_to), mid, elsewhere);
    });
  };
  switch (merge) {
    case fan_out_merge::every_queue:
      start(std::vector<session_queue_report>{});
      break;
    case fan_out_merge::every_match:
      start(std::vector<backfill_state>{});
      break;
    case fan_out_merge::the_one_that_has_it:
      by_answer_type(request, start);
      break;
  }
}

}  // namespace mm::actors
