// The ticket events on the RESP port: MM.XREAD (GET /api/events, the
// long-poll, in Redis Streams' XREAD shape) and MM.SUBSCRIBE (the same
// follower as the WebSocket's, its messages pushed). Same scope, same
// resume semantics, same caps as over HTTP: they run the same route and
// the same feed (event_api.cpp).
#include <cctype>

#include "event_api.hpp"
#include "resp_commands.hpp"
#include "resp_protocol.hpp"
#include "session_api.hpp"

namespace mm::server {

namespace {

using resp::error_reply;
using resp::upper;

constexpr const char* stream_key = "tickets";

bool digits(const std::string& s) {
  return !s.empty() && s.size() <= 19 &&
         std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

// One stream entry: ["<seq>-<n>", [field, value, ...]].
void entry(std::string& out, const std::string& id, const std::vector<std::string>& fields) {
  resp::array(out, 2);
  resp::bulk(out, id);
  resp::array(out, fields.size());
  for (const auto& f : fields) resp::bulk(out, f);
}

std::string str(const json& j, const char* key) {
  return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
}

// GET /api/events's page as XREAD's reply: nil when it holds nothing, else
// [[key, entries]]. An event's id is "<seq>-0"; a gap (events no longer
// held) comes first, with id "<seq before the first event>-1", so an id a
// client passes back always resumes after what it has seen.
std::string xread_reply(const http_response& res, int protocol, const std::string& key) {
  if (res.status != 200) return resp_answer(res);
  const json page = json::parse(res.body, nullptr, false);
  if (!page.is_object()) return error_reply("ERR", "internal error: the events' page");
  const json& events = page["events"];
  const bool missed = page.value("missed", false);
  std::string out;
  if (events.empty() && !missed) {
    resp::null_array(out, protocol);
    return out;
  }
  resp::array(out, 1);
  resp::array(out, 2);
  resp::bulk(out, key);
  resp::array(out, events.size() + (missed ? 1 : 0));
  if (missed) {
    const std::uint64_t before = events.empty() ? page.value("next_after", std::uint64_t{0})
                                                : events[0].value("seq", std::uint64_t{1}) - 1;
    entry(out, std::to_string(before) + "-1",
          {"type", "gap", "why",
           "events after this id are no longer held (sessions.outcome_retention, "
           "sessions.max_outcomes)"});
  }
  for (const json& e : events)
    entry(out, std::to_string(e.value("seq", std::uint64_t{0})) + "-0",
          {"type", "event", "ticket", str(e, "ticket"), "queue", str(e, "queue"), "state",
           str(e, "state"), "json", e.dump(-1, ' ', false, json::error_handler_t::replace)});
  return out;
}

// A subscription: the WebSocket's follower (event_api.cpp), its JSON
// messages pushed as ["message", "tickets", json], the shape of a Redis
// subscriber's messages. A close of the follower (the client fell behind,
// or the queues moved to another node) is pushed as a last message of type
// "closed", then the connection closes.
class event_pushes : public resp_client::stream {
 public:
  event_pushes(std::shared_ptr<websocket_feed> feed, int protocol, std::function<void()> wake)
      : feed_(std::move(feed)), protocol_(protocol), wake_(std::move(wake)) {}

  step next(std::size_t max_frames) override {
    websocket_feed::step s;
    if (!opened_) {
      opened_ = true;
      s = feed_->opened(wake_);
    } else {
      s = feed_->next(max_frames);
    }
    step out;
    for (const auto& m : s.messages) message(out.bytes, m);
    if (s.close) {
      message(
          out.bytes,
          json{{"type", "closed"}, {"code", s.close->first}, {"reason", s.close->second}}.dump());
      out.close = true;
    }
    return out;
  }

  void closed() override {
    if (!done_) feed_->closed();
    done_ = true;
  }

 private:
  void message(std::string& out, const std::string& text) const {
    resp::push(out, 3, protocol_);
    resp::bulk(out, "message");
    resp::bulk(out, stream_key);
    resp::bulk(out, text);
  }

  std::shared_ptr<websocket_feed> feed_;
  int protocol_;
  std::function<void()> wake_;
  bool opened_ = false;
  bool done_ = false;
};

// The command's own reply: a plain array in either protocol, so that any
// client waiting for a reply gets one (the messages that follow are pushes).
std::string subscription_reply(const char* kind, int count) {
  std::string out;
  resp::array(out, 3);
  resp::bulk(out, kind);
  resp::bulk(out, stream_key);
  resp::integer(out, count);
  return out;
}

}  // namespace

// MM.XREAD [COUNT n] [BLOCK ms] STREAMS tickets[:queue,queue] id
void resp_commands::xread(resp_client& client, std::vector<std::string>& args,
                          const resp_reply& reply) {
  static const char* usage =
      "wrong arguments: MM.XREAD [COUNT n] [BLOCK ms] STREAMS tickets[:queue,...] id";
  http_request req = request_of(client, "GET", "/api/events");
  std::size_t i = 1;
  for (; i + 1 < args.size(); i += 2) {
    const std::string option = upper(args[i]);
    if (option == "STREAMS") break;
    if (!digits(args[i + 1])) return reply(error_reply("ERR", option + ": expected a number"));
    if (option == "COUNT") {
      req.params["limit"] = args[i + 1];
    } else if (option == "BLOCK") {
      // Whole seconds, rounded up; BLOCK 0 (for ever) waits the longest a
      // poll may, then answers nil as a timeout does.
      const std::uint64_t ms = std::stoull(args[i + 1]);
      const std::uint64_t s =
          ms == 0 ? max_ticket_wait_seconds
                  : std::min<std::uint64_t>(max_ticket_wait_seconds, (ms + 999) / 1000);
      req.params["wait"] = std::to_string(s);
    } else {
      return reply(error_reply("ERR", usage));
    }
  }
  if (i + 3 != args.size() || upper(args[i]) != "STREAMS") return reply(error_reply("ERR", usage));
  const std::string key = args[i + 1];
  if (key.rfind(stream_key, 0) != 0 || (key.size() > 7 && (key[7] != ':' || key.size() == 8)) ||
      key.size() > 7 + 1 + 4096)
    return reply(error_reply("ERR",
                             "the stream is 'tickets' (every queue) or "
                             "'tickets:<queue>[,<queue>...]'"));
  if (key.size() > 8) req.params["queues"] = key.substr(8);
  const std::string& id = args[i + 2];
  if (id != "$") {
    const std::string seq = id.substr(0, id.find('-'));
    if (!digits(seq) || (seq.size() < id.size() && !digits(id.substr(seq.size() + 1))))
      return reply(error_reply("ERR", "Invalid stream ID specified as stream command argument"));
    req.params["after"] = seq;
  }
  run(std::move(req), events_route_, reply, client.protocol,
      [key](const http_response& res, int protocol) { return xread_reply(res, protocol, key); });
}

// MM.SUBSCRIBE [AFTER seq] [QUEUES a,b]
void resp_commands::subscribe(resp_client& client, std::vector<std::string>& args,
                              const resp_reply& reply) {
  if (client.pushes)
    return reply(error_reply("ERR", "this connection is subscribed already (MM.UNSUBSCRIBE)"));
  http_request req = request_of(client, "GET", "/api/events");
  if (args.size() % 2 != 1)
    return reply(error_reply("ERR", "wrong arguments: MM.SUBSCRIBE [AFTER seq] [QUEUES a,b]"));
  for (std::size_t i = 1; i + 1 < args.size(); i += 2) {
    const std::string option = upper(args[i]);
    if (option != "AFTER" && option != "QUEUES")
      return reply(error_reply("ERR", "unknown option '" + clipped(args[i]) +
                                          "' (MM.SUBSCRIBE [AFTER seq] [QUEUES a,b])"));
    std::string name = option == "AFTER" ? "after" : "queues";
    req.params[name] = args[i + 1];
  }
  if (auto refused = routes_->admit_at(events_route_, req)) return reply(resp_answer(*refused));
  websocket_answer a = event_upgrade(ctx_, req);
  if (a.refusal) return reply(resp_answer(*a.refusal));
  if (!a.feed) return reply(error_reply("ERR", "the ticket events are not served here"));
  client.pushes = std::make_shared<event_pushes>(std::move(a.feed), client.protocol, client.wake);
  reply(subscription_reply("subscribe", 1));
  client.wake();
}

void resp_commands::unsubscribe(resp_client& client, const resp_reply& reply) {
  if (client.pushes) {
    client.pushes->closed();
    client.pushes.reset();
  }
  reply(subscription_reply("unsubscribe", 0));
}

}  // namespace mm::server
