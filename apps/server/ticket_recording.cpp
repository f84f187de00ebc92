#include "ticket_recording.hpp"

#include <algorithm>

#include "mm/session/public_id.hpp"
#include "session_json.hpp"

namespace mm::server {

std::int64_t recording_unix_now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

namespace {

recording_file_settings files_of(const recording_settings& s) {
  recording_file_settings f;
  f.dir = s.dir;
  f.prefix = "recording";
  f.key = "sessions.record.dir";
  f.max_file_bytes = s.max_file_bytes;
  f.max_files = s.max_files;
  f.max_pending = s.max_pending;
  return f;
}

json with_format(json header) {
  header["format"] = recording_format;
  header["version"] = recording_format_version;
  return header;
}

}  // namespace

ticket_recording::ticket_recording(recording_settings settings, json header)
    : queues_(settings.queues.begin(), settings.queues.end()),
      files_(files_of(settings), with_format(std::move(header)),
             [this](const pending& p) { return format(p); }) {}

void ticket_recording::created(const actors::durable_ticket& ticket, std::int64_t unix_ms) {
  const bool wanted = std::any_of(ticket.queues.begin(), ticket.queues.end(),
                                  [&](const std::string& q) { return queues_.count(q) > 0; });
  if (!wanted) return;
  open_.insert(ticket.id);
  pending p;
  p.what = pending::kind::created;
  p.ticket = ticket;
  p.unix_ms = unix_ms;
  files_.push(std::move(p));
}

void ticket_recording::left(const actors::ticket_outcome& outcome, std::int64_t unix_ms) {
  if (open_.erase(outcome.ticket) == 0) return;
  pending p;
  p.outcome = outcome;
  p.unix_ms = unix_ms;
  files_.push(std::move(p));
}

// "coop", or a shard of it ("coop.eu"). queues_ is not changed after the
// constructor: safe from any queue actor's thread.
bool ticket_recording::records(const std::string& name) const {
  return queues_.count(name) > 0 || queues_.count(name.substr(0, name.find('.'))) > 0;
}

void ticket_recording::queue_started(const std::string& name, std::uint64_t seed,
                                     std::int64_t unix_ms) {
  pending p;
  p.what = pending::kind::queue;
  p.queue = name;
  p.seed = seed;
  p.unix_ms = unix_ms;
  files_.push(std::move(p));
}

void ticket_recording::joined_late(const std::string& name, std::uint64_t id,
                                   std::int64_t tick_unix_ms) {
  push_queue_event(pending::kind::late, name, id, tick_unix_ms);
}

void ticket_recording::cancelled(const std::string& name, std::uint64_t id, std::int64_t unix_ms) {
  push_queue_event(pending::kind::cancel, name, id, unix_ms);
}

void ticket_recording::push_queue_event(pending::kind what, const std::string& name,
                                        std::uint64_t id, std::int64_t unix_ms) {
  pending p;
  p.what = what;
  p.queue = name;
  p.ticket.id = id;
  p.unix_ms = unix_ms;
  files_.push(std::move(p));
}

void ticket_recording::ticked(const std::string& name, std::int64_t unix_ms) {
  pending p;
  p.what = pending::kind::tick;
  p.queue = name;
  p.unix_ms = unix_ms;
  files_.push(std::move(p));
}

// On the writer thread.
json ticket_recording::format(const pending& p) {
  switch (p.what) {
    case pending::kind::created:
      ++events_;
      return {{"t", p.unix_ms},
              {"event", "created"},
              {"ticket", session::format_public_id(p.ticket.id)},
              {"body", ticket_body_json(p.ticket.queues, p.ticket.ticket)}};
    case pending::kind::left:
      ++events_;
      return {{"t", p.unix_ms}, {"event", "left"}, {"outcome", outcome_json(p.outcome)}};
    case pending::kind::queue:
      // The seed as text: a JSON number need not hold 64 bits.
      return {{"t", p.unix_ms},
              {"event", "queue"},
              {"queue", p.queue},
              {"seed", std::to_string(p.seed)}};
    case pending::kind::tick:
      return {{"t", p.unix_ms}, {"event", "tick"}, {"queue", p.queue}};
    case pending::kind::late:
    case pending::kind::cancel:
      break;
  }
  return {{"t", p.unix_ms},
          {"event", p.what == pending::kind::late ? "late" : "cancel"},
          {"queue", p.queue},
          {"ticket", session::format_public_id(p.ticket.id)}};
}

}  // namespace mm::server
