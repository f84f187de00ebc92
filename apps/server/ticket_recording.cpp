#include "ticket_recording.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "mm/engine/error.hpp"
#include "mm/engine/log.hpp"
#include "mm/session/public_id.hpp"
#include "session_json.hpp"

namespace mm::server {

namespace {

namespace fs = std::filesystem;

std::int64_t unix_now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// recording-<unix ms>-<sequence>.jsonl: names sort by age.
bool is_recording_file(const fs::path& p) {
  const std::string name = p.filename().string();
  return name.rfind("recording-", 0) == 0 && p.extension() == ".jsonl";
}

}  // namespace

ticket_recording::ticket_recording(recording_settings settings, json header)
    : settings_(std::move(settings)),
      header_(std::move(header)),
      queues_(settings_.queues.begin(), settings_.queues.end()) {
  std::error_code ec;
  fs::create_directories(settings_.dir, ec);
  if (ec || !fs::is_directory(settings_.dir))
    throw error(errc::invalid_config, "sessions.record.dir: cannot make the directory '" +
                                          settings_.dir + "': " + ec.message());
  started_unix_ms_ = unix_now_ms();
  start_file();
  if (!out_)
    throw error(errc::invalid_config,
                "sessions.record.dir: cannot write a file in '" + settings_.dir + "'");
  writer_ = std::thread([this] { run(); });
}

ticket_recording::~ticket_recording() {
  {
    std::lock_guard lock(m_);
    stopping_ = true;
  }
  wake_.notify_all();
  writer_.join();
}

void ticket_recording::created(const actors::durable_ticket& ticket, std::int64_t unix_ms) {
  const bool wanted = std::any_of(ticket.queues.begin(), ticket.queues.end(),
                                  [&](const std::string& q) { return queues_.count(q) > 0; });
  if (!wanted) return;
  open_.insert(ticket.id);
  pending p;
  p.what = pending::kind::created;
  p.ticket = ticket;
  p.unix_ms = unix_ms;
  push(std::move(p));
}

void ticket_recording::left(const actors::ticket_outcome& outcome, std::int64_t unix_ms) {
  if (open_.erase(outcome.ticket) == 0) return;
  pending p;
  p.outcome = outcome;
  p.unix_ms = unix_ms;
  push(std::move(p));
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
  push(std::move(p));
}

void ticket_recording::joined_late(const std::string& name, std::uint64_t id,
                                   std::int64_t tick_unix_ms) {
  pending p;
  p.what = pending::kind::late;
  p.queue = name;
  p.ticket.id = id;
  p.unix_ms = tick_unix_ms;
  push(std::move(p));
}

void ticket_recording::ticked(const std::string& name, std::int64_t unix_ms) {
  pending p;
  p.what = pending::kind::tick;
  p.queue = name;
  p.unix_ms = unix_ms;
  push(std::move(p));
}

// The writer is woken only by a full batch (and by its 200 ms timer): one
// wake-up per event cost the service's thread a futex call, and the
// machine a context switch, per ticket (measured: most of the recording's
// cost before, docs/performance.md).
void ticket_recording::push(pending p) {
  bool full = false;
  {
    std::lock_guard lock(m_);
    if (queue_.size() >= settings_.max_pending) {
      ++lost_since_written_;
      ++dropped_;
      return;
    }
    queue_.push_back(std::move(p));
    ++pushed_;
    full = queue_.size() == wake_batch;
  }
  if (full) wake_.notify_one();
}

void ticket_recording::flush() {
  std::unique_lock lock(m_);
  const std::uint64_t target = pushed_;
  flush_to_ = std::max(flush_to_, target);
  wake_.notify_one();
  written_.wait(lock, [&] { return done_ >= target || stopping_; });
}

void ticket_recording::run() {
  std::vector<pending> batch;
  for (;;) {
    std::uint64_t lost = 0;
    bool last = false;
    {
      std::unique_lock lock(m_);
      wake_.wait_for(lock, std::chrono::milliseconds(200), [&] {
        return stopping_ || queue_.size() >= wake_batch || (done_ < flush_to_ && !queue_.empty());
      });
      batch.swap(queue_);
      lost = lost_since_written_;
      lost_since_written_ = 0;
      last = stopping_;
    }
    if (lost > 0)
      write_line(json{{"t", unix_now_ms()}, {"event", "gap"}, {"dropped", lost}}.dump());
    for (auto& p : batch) {
      json line;
      switch (p.what) {
        case pending::kind::created:
          line = {{"t", p.unix_ms},
                  {"event", "created"},
                  {"ticket", session::format_public_id(p.ticket.id)},
                  {"body", ticket_body_json(p.ticket.queues, p.ticket.ticket)}};
          break;
        case pending::kind::left:
          line = {{"t", p.unix_ms}, {"event", "left"}, {"outcome", outcome_json(p.outcome)}};
          break;
        case pending::kind::queue:
          // The seed as text: a JSON number need not hold 64 bits.
          line = {{"t", p.unix_ms},
                  {"event", "queue"},
                  {"queue", p.queue},
                  {"seed", std::to_string(p.seed)}};
          break;
        case pending::kind::tick:
          line = {{"t", p.unix_ms}, {"event", "tick"}, {"queue", p.queue}};
          break;
        case pending::kind::late:
          line = {{"t", p.unix_ms},
                  {"event", "late"},
                  {"queue", p.queue},
                  {"ticket", session::format_public_id(p.ticket.id)}};
          break;
      }
      write_line(line.dump());
      if (p.what == pending::kind::created || p.what == pending::kind::left) ++events_;
    }
    out_.flush();
    {
      std::lock_guard lock(m_);
      done_ += batch.size();
    }
    written_.notify_all();
    batch.clear();
    if (last) return;
  }
}

void ticket_recording::write_line(const std::string& line) {
  if (file_bytes_ + line.size() + 1 > settings_.max_file_bytes && file_bytes_ > 0) start_file();
  out_ << line << '\n';
  file_bytes_ += line.size() + 1;
  bytes_ += line.size() + 1;
}

void ticket_recording::start_file() {
  out_.close();
  ++sequence_;
  char name[64];
  std::snprintf(name, sizeof name, "recording-%lld-%06llu.jsonl",
                static_cast<long long>(started_unix_ms_),
                static_cast<unsigned long long>(sequence_));
  // A buffer of 1 MiB: a write call per MiB rather than per few KiB.
  out_ = std::ofstream();
  out_.rdbuf()->pubsetbuf(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
  out_.open(fs::path(settings_.dir) / name, std::ios::binary | std::ios::trunc);
  file_bytes_ = 0;
  ++files_;
  json header = header_;
  header["format"] = recording_format;
  header["version"] = recording_format_version;
  header["started_unix_ms"] = unix_now_ms();
  header["file"] = sequence_;
  const std::string line = header.dump();
  out_ << line << '\n';
  file_bytes_ += line.size() + 1;
  bytes_ += line.size() + 1;
  out_.flush();
  prune();
}

// The oldest recording files beyond max_files go (those of earlier runs too).
void ticket_recording::prune() {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(settings_.dir, ec))
    if (e.is_regular_file() && is_recording_file(e.path())) files.push_back(e.path());
  if (files.size() <= settings_.max_files) return;
  std::sort(files.begin(), files.end());
  for (std::size_t i = 0; i + settings_.max_files < files.size(); ++i) {
    fs::remove(files[i], ec);
    if (ec) log(log_level::warning, "recording: cannot delete " + files[i].string());
  }
}

}  // namespace mm::server
