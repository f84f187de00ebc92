// A RESP connection's commands and replies (resp_server_impl.hpp): the
// commands read from its input and run, at most a turn's worth at a time;
// the replies sent in the order of their commands, then a subscription's
// pushes; the epoll interest kept to what the connection can take; the
// time limits swept.
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>

#include "resp_protocol.hpp"
#include "resp_server_impl.hpp"

namespace mm::server {

namespace {

using namespace resp_detail;

// An inline "command" that is an HTTP request line or header.
bool looks_like_http(const std::vector<std::string>& args) {
  if (args.empty()) return false;
  std::string word = args[0];
  for (char& ch : word) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  for (const char* http : {"GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS", "HOST:"})
    if (word == http) return true;
  return false;
}

}  // namespace

void resp_server::impl::process(const std::shared_ptr<resp_connection>& c) {
  collect(*c);  // replies done free their slots: commands held back may go on
  std::vector<std::string> args;
  std::size_t at = 0;
  for (std::size_t ran = 0; ran < commands_per_turn && !paused(*c) && at < c->in.size() &&
                            c->in.size() - at >= c->in_need;
       ++ran) {
    resp_read_limits limits{settings.max_arguments, c->client.max_bulk_bytes, 64 * 1024};
    const resp_parse p = read_command(std::string_view(c->in).substr(at), limits, args);
    if (p.result == resp_parse::status::incomplete) {
      c->in_need = p.bytes;
      if (c->in.size() - at > settings.max_command_bytes) {
        ++stats.protocol_errors;
        std::string e;
        resp::error(e, "ERR",
                    "Protocol error: a command is larger than resp.max_command_bytes (" +
                        std::to_string(settings.max_command_bytes) + ")");
        std::lock_guard lock(c->mutex);
        c->slots.push_back({std::move(e), true});
        c->closing = true;
        c->closing_since = clock::now();
      }
      break;
    }
    c->in_need = 0;
    std::uint64_t seq;
    {
      std::lock_guard lock(c->mutex);
      seq = c->first_seq + c->slots.size();
      c->slots.emplace_back();
      if (p.result == resp_parse::status::error) {
        ++stats.protocol_errors;
        resp::error(c->slots.back().bytes, "ERR", "Protocol error: " + p.error);
        c->slots.back().done = true;
      }
    }
    if (p.result == resp_parse::status::error) {
      c->closing = true;
      c->closing_since = clock::now();
      break;
    }
    at += p.bytes;
    if (p.inline_form && looks_like_http(args)) {
      // A browser's request sent here by another site's page: each header
      // line would be read as a command. Refused and closed (no command ran).
      ++stats.protocol_errors;
      std::lock_guard lock(c->mutex);
      resp::error(c->slots.back().bytes, "ERR",
                  "Protocol error: this is a RESP port, not HTTP (see resp.port)");
      c->slots.back().done = true;
      c->closing = true;
      c->closing_since = clock::now();
      break;
    }
    if (args.empty()) {  // a blank inline line: nothing to answer
      std::lock_guard lock(c->mutex);
      c->slots.pop_back();
      continue;
    }
    ++stats.commands;
    const resp_reply reply(std::make_shared<resp_reply::state>(c, seq));
    try {
      handlers.command(c->client, args, reply);
    } catch (const std::exception& e) {
      std::string r;
      resp::error(r, "ERR", std::string("internal error: ") + e.what());
      reply(std::move(r));
    }
    if (c->client.quit && !c->closing) {
      c->closing = true;
      c->closing_since = clock::now();
    }
  }
  if (at > 0) c->in.erase(0, at);
  c->partial_since = c->in.empty() ? clock::time_point{} : c->partial_since;
  if (!c->in.empty() && c->partial_since == clock::time_point{}) c->partial_since = clock::now();
  flush(c);
}

// Sends the replies that are ready, in order, then what a subscription has
// to push; asks for EPOLLOUT while bytes are left.
void resp_server::impl::flush(const std::shared_ptr<resp_connection>& c) {
  if (c->gone) return;
  collect(*c);
  if (!c->owes()) pump(c);  // pushes never overtake a reply owed
  if (c->gone) return;
  while (c->out_at < c->out.size()) {
    const ssize_t sent =
        ::send(c->fd, c->out.data() + c->out_at, c->out.size() - c->out_at, MSG_NOSIGNAL);
    if (sent > 0) {
      c->out_at += static_cast<std::size_t>(sent);
      c->write_waiting_since = clock::time_point{};
      continue;
    }
    if (sent < 0 && errno == EINTR) continue;
    if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (c->write_waiting_since == clock::time_point{}) c->write_waiting_since = clock::now();
      break;
    }
    close(c);
    return;
  }
  if (c->out_at == c->out.size()) {
    c->out.clear();
    c->out_at = 0;
  } else if (c->out_at > (1u << 20)) {
    c->out.erase(0, c->out_at);
    c->out_at = 0;
  }
  if (c->closing && c->out.empty() && !c->owes()) return close(c);
  interest(*c);
  // Commands read while the connection was paused go on once it is not.
  if (!c->in.empty() && c->in.size() >= c->in_need && !paused(*c)) mark_ready(c);
}

void resp_server::impl::collect(resp_connection& c) {
  std::lock_guard lock(c.mutex);
  while (!c.slots.empty() && c.slots.front().done) {
    c.out += c.slots.front().bytes;
    c.slots.pop_front();
    ++c.first_seq;
  }
}

// A subscription's pushes, while the client takes them.
void resp_server::impl::pump(const std::shared_ptr<resp_connection>& c) {
  if (!c->client.pushes || !c->stream_woken.exchange(false)) return;
  if (c->out.size() - c->out_at >= settings.max_output_bytes) {
    c->stream_woken = true;  // again once the client took some
    return;
  }
  const auto step = c->client.pushes->next(64);
  c->out += step.bytes;
  if (step.close && !c->closing) {
    c->closing = true;
    c->closing_since = clock::now();
  } else if (!step.bytes.empty()) {
    c->stream_woken = true;  // there may be more
    c->srv->mark_ready(c);
  }
}

void resp_server::impl::interest(resp_connection& c) {
  std::uint32_t want = 0;
  if (!paused(c) && c.in.size() <= settings.max_command_bytes) want |= EPOLLIN;
  if (c.out_at < c.out.size()) want |= EPOLLOUT;
  if (want == c.events) return;
  c.events = want;
  epoll_event ev{};
  ev.events = want;
  ev.data.ptr = &c;
  ::epoll_ctl(epoll_fd, EPOLL_CTL_MOD, c.fd, &ev);
}

void resp_server::impl::close(const std::shared_ptr<resp_connection>& c) {
  if (c->gone) return;
  c->gone = true;
  {
    std::lock_guard lock(c->mutex);
    c->closed = true;
    c->slots.clear();
  }
  if (c->client.pushes) {
    c->client.pushes->closed();
    c->client.pushes.reset();
  }
  c->client.wake = nullptr;
  ::epoll_ctl(epoll_fd, EPOLL_CTL_DEL, c->fd, nullptr);
  ::close(c->fd);
  lru.erase(c->lru);
  if (--per_address[c->client.address] == 0) per_address.erase(c->client.address);
  --stats.open;
  conns.erase(c.get());
}

// The time limits: a command that takes too long to arrive, replies the
// client leaves untaken, a connection idle too long, a close that waited
// long enough for the replies owed.
void resp_server::impl::sweep() {
  const auto now = clock::now();
  if (!accepting && now >= accept_again) {
    accepting = true;
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = listener;
    ::epoll_ctl(epoll_fd, EPOLL_CTL_ADD, listener, &ev);
    accept_all();
  }
  std::vector<std::shared_ptr<resp_connection>> expired;
  for (auto& [raw, c] : conns) {
    const bool partial = c->partial_since != clock::time_point{} &&
                         now - c->partial_since > settings.command_timeout;
    const bool stalled = c->write_waiting_since != clock::time_point{} &&
                         now - c->write_waiting_since > settings.stalled_timeout;
    const bool idle = !c->client.pushes && c->in.empty() && c->out.empty() &&
                      now - c->active > settings.idle_timeout && !c->owes();
    const bool late_close = c->closing && now - c->closing_since > closing_grace;
    if (partial || stalled || idle || late_close) expired.push_back(c);
  }
  for (auto& c : expired) {
    ++stats.timed_out;
    close(c);
  }
}

}  // namespace mm::server
