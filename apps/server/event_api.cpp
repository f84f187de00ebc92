#include "event_api.hpp"

#include <deque>
#include <limits>
#include <mutex>

#include "cluster_node.hpp"
#include "mm/actors/permissions.hpp"
#include "session_api.hpp"
#include "session_json.hpp"

namespace mm::server {

namespace {

using actors::event_filter;
using actors::ticket_event_feed;
using actors::ticket_outcome;

constexpr std::size_t max_queue_name = 64;
constexpr std::uint64_t max_poll_events = 1000;

json event_json(const ticket_outcome& e) {
  json j = outcome_json(e);
  j["type"] = "event";
  j["at_unix_ms"] = e.at_unix_ms;
  return j;
}

std::string message(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

// "a,b,c": queue names, each non-empty and short, at most `max` of them.
std::vector<std::string> queue_list(const std::string& text, std::size_t max) {
  std::vector<std::string> out;
  std::size_t from = 0;
  while (from <= text.size() && !text.empty()) {
    const auto comma = text.find(',', from);
    std::string name = text.substr(from, comma == std::string::npos ? comma : comma - from);
    if (name.empty() || name.size() > max_queue_name)
      throw bad_request(
          "parameter 'queues' must be queue names (1 to 64 bytes) separated by commas");
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(std::move(name));
    if (out.size() > max)
      throw bad_request("parameter 'queues' names more than " + std::to_string(max) + " queues");
    if (comma == std::string::npos) break;
    from = comma + 1;
  }
  return out;
}

// The caller's scope: its own tickets (an admin: every ticket), in the
// queues of the request (none: every queue).
event_filter filter_of(const http_context& ctx, const http_request& req) {
  event_filter f;
  if (caller_role(ctx.access, req) != role::admin)
    f.credential = caller_credential(ctx.access, req);
  f.queues = queue_list(req.param("queues"), ctx.config.sessions.event_subscriptions);
  return f;
}

std::uint64_t after_of(const http_request& req, const ticket_event_feed& feed) {
  return param(req, "after", feed.last_seq(), std::numeric_limits<std::uint64_t>::max());
}

// One WebSocket's follower: its cursor in the feed and the events it owes
// (at most sessions.event_backlog pointers into the feed, nothing copied).
class event_socket : public websocket_feed {
 public:
  event_socket(ticket_event_feed& feed, event_filter filter, std::uint64_t after,
               const session_settings& limits, std::shared_ptr<event_wake> wake,
               std::uint64_t follower, events_moved moved)
      : feed_(feed),
        filter_(std::move(filter)),
        cursor_(after),
        backlog_(limits.event_backlog),
        max_queues_(limits.event_subscriptions),
        wake_(std::move(wake)),
        follower_(follower),
        moved_(std::move(moved)) {}

  step opened(std::function<void()> wake) override {
    {
      std::lock_guard lock(wake_->mutex);
      wake_->target = std::move(wake);
    }
    step s;
    s.messages.push_back(message({{"type", "hello"},
                                  {"after", cursor_},
                                  {"last_seq", feed_.last_seq()},
                                  {"queues", filter_.queues},
                                  {"own_tickets_only", filter_.credential.has_value()}}));
    step more = next(15);
    for (auto& m : more.messages) s.messages.push_back(std::move(m));
    s.close = std::move(more.close);
    return s;
  }

  step next(std::size_t max) override {
    step s;
    // Asked before reading: an event written before the hand-over is read
    // by this step or an earlier one, and sent before the close.
    const std::optional<std::string> moved = moved_ ? moved_() : std::nullopt;
    {
      // Room 0 still reads: `more` then says whether anything else is owed.
      const std::size_t room = backlog_ > pending_.size() ? backlog_ - pending_.size() : 0;
      auto page = feed_.read_after(cursor_, filter_, room);
      if (page.missed) pending_.push_back({nullptr, cursor_});
      if (!page.events.empty()) cursor_ = page.events.back()->seq;
      if (!page.more) cursor_ = std::max(cursor_, page.last_seq);
      for (auto& e : page.events) pending_.push_back({std::move(e), 0});
      if (page.more) {
        s.close.emplace(close_slow_consumer, "slow consumer: more than " +
                                                 std::to_string(backlog_) +
                                                 " events owed (sessions.event_backlog)");
        return s;
      }
    }
    while (s.messages.size() < max && !pending_.empty()) {
      const owed& o = pending_.front();
      if (o.event)
        s.messages.push_back(message(event_json(*o.event)));
      else
        s.messages.push_back(message({{"type", "gap"},
                                      {"after", o.gap_after},
                                      {"why",
                                       "events after this sequence number are no longer held "
                                       "(sessions.outcome_retention, sessions.max_outcomes)"}}));
      pending_.pop_front();
    }
    if (moved && pending_.empty()) s.close.emplace(close_sessions_moved, *moved);
    return s;
  }

  step received(std::string_view text) override {
    step s;
    try {
      const json m = parse_body(std::string(text));
      if (!m.is_object() || !m.contains("type") || !m["type"].is_string())
        throw bad_request("type: expected \"subscribe\", \"unsubscribe\" or \"ping\"");
      const std::string type = m["type"];
      if (type == "ping") {
        s.messages.push_back(message({{"type", "pong"}, {"last_seq", feed_.last_seq()}}));
        return s;
      }
      if (type != "subscribe" && type != "unsubscribe")
        throw bad_request("type: expected \"subscribe\", \"unsubscribe\" or \"ping\", got '" +
                          clipped(type) + "'");
      if (!m.contains("queue") || !m["queue"].is_string())
        throw bad_request("queue: expected a queue name");
      const std::string queue = m["queue"];
      if (queue.empty() || queue.size() > max_queue_name)
        throw bad_request("queue: a queue name is 1 to 64 bytes");
      auto& qs = filter_.queues;
      const auto at = std::find(qs.begin(), qs.end(), queue);
      if (type == "unsubscribe") {
        if (at != qs.end()) qs.erase(at);
      } else if (at == qs.end()) {
        if (qs.size() >= max_queues_)
          throw bad_request("queue: this connection holds " + std::to_string(max_queues_) +
                            " subscriptions already (sessions.event_subscriptions)");
        qs.push_back(queue);
      }
      s.messages.push_back(message({{"type", "subscribed"}, {"queues", qs}}));
    } catch (const bad_request& e) {
      s.messages.push_back(message({{"type", "error"}, {"error", e.what()}}));
    }
    return s;
  }

  void closed() override {
    feed_.unsubscribe(follower_);
    std::lock_guard lock(wake_->mutex);
    wake_->target = nullptr;
  }

 private:
  ticket_event_feed& feed_;
  event_filter filter_;
  std::uint64_t cursor_;  // every event up to here is sent or in pending_
  std::size_t backlog_;
  std::size_t max_queues_;
  std::shared_ptr<event_wake> wake_;
  std::uint64_t follower_;
  events_moved moved_;
  // An event to send, or (no event) word that those after `gap_after` were dropped.
  struct owed {
    ticket_event_feed::event event;
    std::uint64_t gap_after = 0;
  };
  std::deque<owed> pending_;
};

json page_json(const ticket_event_feed::page& page, std::uint64_t after) {
  json events = json::array();
  for (const auto& e : page.events) events.push_back(event_json(*e));
  std::uint64_t next = after;
  if (!page.events.empty()) next = page.events.back()->seq;
  if (!page.more) next = std::max(next, page.last_seq);
  return {{"events", events},
          {"last_seq", page.last_seq},
          {"next_after", next},
          {"missed", page.missed},
          {"more", page.more}};
}

// A long-poll waiting for its first event: answered by the first wake-up
// that finds one, by its timer, or when the server stops.
struct event_poll {
  event_poll(ticket_event_feed& f, event_filter fl, std::uint64_t a, std::size_t l, http_reply r,
             events_moved m)
      : feed(f),
        filter(std::move(fl)),
        after(a),
        limit(l),
        reply(std::move(r)),
        moved(std::move(m)) {}
  ticket_event_feed& feed;
  event_filter filter;
  std::uint64_t after;
  std::size_t limit;
  http_reply reply;
  events_moved moved;  // the queues left this node: answered at once (the next poll is redirected)
  std::mutex mutex;
  std::optional<std::uint64_t> follower;
  bool answered = false;

  void try_answer(bool timed_out) {
    auto page = feed.read_after(after, filter, limit);
    if (page.events.empty() && !page.missed && !timed_out && !feed.closing() && !(moved && moved()))
      return;
    {
      std::lock_guard lock(mutex);
      if (answered) return;
      answered = true;
      if (follower) feed.unsubscribe(*follower);
    }
    http_response res;
    send_json(res, page_json(page, after));
    reply(std::move(res));
  }
};

// A follower of the filter's credential (an admin's: every event), counted
// against the caller's own token; 429 at the per-token cap.
std::uint64_t follow(const http_context& ctx, const http_request& req, ticket_event_feed& feed,
                     const std::optional<std::string>& credential, std::function<void()> wake) {
  const auto cap = ctx.config.sessions.event_connections_per_credential;
  const auto follower =
      feed.subscribe(credential, std::move(wake), cap, caller_credential(ctx.access, req));
  if (!follower)
    throw http_error(429, "this token follows the events on " + std::to_string(cap) +
                              " connections already (sessions.event_connections_per_credential)");
  return *follower;
}

// On a node of a cluster whose session queues stopped (handed over, or
// their lease lost): why, and where they are going. The feed goes not live
// once the queues' last event is in it and the node has read who takes them
// over; until then a follower keeps its connection. Close reasons are at most
// 123 bytes.
events_moved moved_of(const http_context& ctx) {
  return [&ctx]() -> std::optional<std::string> {
    const cluster_node* node = ctx.cluster.load();
    if (!node || !ctx.events || ctx.events->live()) return std::nullopt;
    const auto url = node->heir_url(sessions_resource);
    std::string why = url ? "session queues moved to " + *url
                          : "session queues moved to another node (any node redirects there)";
    if (why.size() > 123) why.resize(123);
    return why;
  };
}

ticket_event_feed& feed_of(const http_context& ctx) {
  if (!ctx.events) throw http_error(503, "the ticket events are not served by this server");
  return *ctx.events;
}

// GET /api/events without an upgrade: a page of events after `after`, or
// a long-poll that waits up to `wait` seconds for the first one.
void poll_events(http_context& ctx, const http_request& req, const http_reply& reply) {
  ticket_event_feed& feed = feed_of(ctx);
  event_filter filter = filter_of(ctx, req);
  const std::uint64_t after = after_of(req, feed);
  const auto limit = static_cast<std::size_t>(param(req, "limit", 100, max_poll_events));
  const auto wait = param(req, "wait", 0, max_ticket_wait_seconds);
  if (limit == 0) throw bad_request("parameter 'limit' must be at least 1");
  auto page = feed.read_after(after, filter, limit);
  if (!page.events.empty() || page.missed || wait == 0 || feed.closing()) {
    http_response res;
    send_json(res, page_json(page, after));
    return reply(std::move(res));
  }
  const auto credential = filter.credential;
  auto poll =
      std::make_shared<event_poll>(feed, std::move(filter), after, limit, reply, moved_of(ctx));
  actors::session_bridge& bridge = ctx.sessions;
  const std::uint64_t follower = follow(ctx, req, feed, credential, [poll, &bridge] {
    bridge.run_later(std::chrono::milliseconds(0), [poll] { poll->try_answer(false); });
  });
  {
    std::lock_guard lock(poll->mutex);
    poll->follower = follower;
  }
  bridge.run_later(std::chrono::seconds(wait), [poll] { poll->try_answer(true); });
  poll->try_answer(false);  // an event appended before the subscription
}

const route_row event_routes[] = {
    {"GET", "/api/events", actors::needed(actors::operation::events_read), nullptr, poll_events},
};

}  // namespace

void add_event_routes(api_routes& api, http_context&) {
  api.add_rows(event_routes);
}

std::shared_ptr<websocket_feed> make_event_socket(ticket_event_feed& feed, event_filter filter,
                                                  std::uint64_t after,
                                                  const session_settings& limits,
                                                  std::shared_ptr<event_wake> wake,
                                                  std::uint64_t follower, events_moved moved) {
  return std::make_shared<event_socket>(feed, std::move(filter), after, limits, std::move(wake),
                                        follower, std::move(moved));
}

websocket_answer event_upgrade(http_context& ctx, http_request& req) {
  if (req.path != "/api/events") return {};
  // A node that does not run the session queues redirects (307) to the one
  // that does, or answers 503 while they are being taken over. With
  // partitions every node follows every partition's events.
  if (const auto resource = session_routes_resource(ctx.config.sessions.partitions);
      !resource.empty())
    if (auto elsewhere = served_elsewhere(ctx, req, resource))
      return {nullptr, std::move(*elsewhere)};
  try {
    ticket_event_feed& feed = feed_of(ctx);
    event_filter filter = filter_of(ctx, req);
    const std::uint64_t after = after_of(req, feed);
    auto wake = std::make_shared<event_wake>();
    const std::uint64_t follower = follow(ctx, req, feed, filter.credential, [wake] { (*wake)(); });
    return {make_event_socket(feed, std::move(filter), after, ctx.config.sessions, std::move(wake),
                              follower, moved_of(ctx)),
            std::nullopt};
  } catch (const bad_request& e) {
    return {nullptr, error_response(400, e.what())};
  } catch (const http_error& e) {
    return {nullptr, error_response(e.status, e.what())};
  }
}

}  // namespace mm::server
