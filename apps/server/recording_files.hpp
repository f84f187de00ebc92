// The files of a recording (the ticket stream's, ticket_recording.hpp; the
// async queries', query_recording.hpp): JSON lines in rotating files,
// bounded in size, written by a thread of their own.
//
// - Each file starts with a header line (the given header, with the
//   format, version, file number and start time). Files are named
//   `<prefix>-<start unix ms>-<number>.jsonl`: the names sort by age.
// - A file is closed at max_file_bytes and a new one started; beyond
//   max_files the oldest files of the same prefix in the directory are
//   deleted. A recording never holds more than max_files x max_file_bytes.
// - The caller's thread only moves an event into a queue (push); the
//   writer thread formats (`format`) and writes them. The writer is woken
//   by a batch of 1,024 events or every 200 ms: one wake-up per event cost
//   the caller a futex call and the machine a context switch per event
//   (docs/performance.md). When the writer falls behind by max_pending
//   events, new ones are dropped and counted, and a "gap" line says how many
//   before the next line written.
// - Lines are flushed to the file at least every 200 ms.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "json_codec.hpp"
#include "mm/engine/error.hpp"
#include "mm/engine/log.hpp"

namespace mm::server {

struct recording_file_settings {
  std::string dir = "recordings";
  std::string prefix = "recording";         // file names: <prefix>-<ms>-<n>.jsonl
  std::string key = "sessions.record.dir";  // named when the directory cannot be written
  std::uint64_t max_file_bytes = 64ull << 20;
  std::uint32_t max_files = 8;
  std::size_t max_pending = 100'000;  // events waiting for the writer
};

std::int64_t recording_unix_now_ms();

template <class Event>
class recording_files {
 public:
  // `header` is each file's first line, with "file" and "started_unix_ms"
  // added. Throws mm::error (invalid_config) naming settings.key when the
  // directory cannot be made or written.
  recording_files(recording_file_settings settings, json header,
                  std::function<json(const Event&)> format)
      : settings_(std::move(settings)), header_(std::move(header)), format_(std::move(format)) {
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::create_directories(settings_.dir, ec);
    if (ec || !fs::is_directory(settings_.dir))
      throw error(errc::invalid_config, settings_.key + ": cannot make the directory '" +
                                            settings_.dir + "': " + ec.message());
    started_unix_ms_ = recording_unix_now_ms();
    start_file();
    if (!out_)
      throw error(errc::invalid_config,
                  settings_.key + ": cannot write a file in '" + settings_.dir + "'");
    writer_ = std::thread([this] { run(); });
  }
  recording_files(const recording_files&) = delete;
  recording_files& operator=(const recording_files&) = delete;

  ~recording_files() {  // writes what is pending, then stops
    {
      std::lock_guard lock(m_);
      stopping_ = true;
    }
    wake_.notify_all();
    writer_.join();
  }

  // From any thread.
  void push(Event e) {
    bool full = false;
    {
      std::lock_guard lock(m_);
      if (queue_.size() >= settings_.max_pending) {
        ++lost_since_written_;
        ++dropped_;
        return;
      }
      queue_.push_back(std::move(e));
      ++pushed_;
      full = queue_.size() == wake_batch;
    }
    if (full) wake_.notify_one();
  }

  // Writes what is pending now and returns once it is in the file.
  void flush() {
    std::unique_lock lock(m_);
    const std::uint64_t target = pushed_;
    flush_to_ = std::max(flush_to_, target);
    wake_.notify_one();
    written_.wait(lock, [&] { return done_ >= target || stopping_; });
  }

  std::uint64_t lines() const { return lines_; }      // event lines written
  std::uint64_t dropped() const { return dropped_; }  // events the writer could not keep up with
  std::uint64_t bytes() const { return bytes_; }      // bytes written, headers included
  std::uint64_t files() const { return files_; }      // files started

 private:
  void run() {
    std::vector<Event> batch;
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
        write_line(
            json{{"t", recording_unix_now_ms()}, {"event", "gap"}, {"dropped", lost}}.dump());
      for (const auto& e : batch) {
        write_line(format_(e).dump());
        ++lines_;
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

  void write_line(const std::string& line) {
    if (file_bytes_ + line.size() + 1 > settings_.max_file_bytes && file_bytes_ > 0) start_file();
    out_ << line << '\n';
    file_bytes_ += line.size() + 1;
    bytes_ += line.size() + 1;
  }

  void start_file() {
    out_.close();
    ++sequence_;
    char name[96];
    std::snprintf(name, sizeof name, "%s-%lld-%06llu.jsonl", settings_.prefix.c_str(),
                  static_cast<long long>(started_unix_ms_),
                  static_cast<unsigned long long>(sequence_));
    // A buffer of 1 MiB: a write call per MiB rather than per few KiB.
    out_ = std::ofstream();
    out_.rdbuf()->pubsetbuf(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
    out_.open(std::filesystem::path(settings_.dir) / name, std::ios::binary | std::ios::trunc);
    file_bytes_ = 0;
    ++files_;
    json header = header_;
    header["started_unix_ms"] = recording_unix_now_ms();
    header["file"] = sequence_;
    const std::string line = header.dump();
    out_ << line << '\n';
    file_bytes_ += line.size() + 1;
    bytes_ += line.size() + 1;
    out_.flush();
    prune();
  }

  // The oldest files of this prefix beyond max_files go (those of earlier
  // runs too).
  void prune() {
    namespace fs = std::filesystem;
    std::vector<fs::path> files;
    std::error_code ec;
    const std::string start = settings_.prefix + "-";
    for (const auto& e : fs::directory_iterator(settings_.dir, ec)) {
      const std::string name = e.path().filename().string();
      if (e.is_regular_file() && name.rfind(start, 0) == 0 && e.path().extension() == ".jsonl")
        files.push_back(e.path());
    }
    if (files.size() <= settings_.max_files) return;
    std::sort(files.begin(), files.end());
    for (std::size_t i = 0; i + settings_.max_files < files.size(); ++i) {
      fs::remove(files[i], ec);
      if (ec) log(log_level::warning, "recording", "cannot delete " + files[i].string());
    }
  }

  const recording_file_settings settings_;
  const json header_;
  const std::function<json(const Event&)> format_;

  std::mutex m_;
  std::condition_variable wake_, written_;
  std::vector<Event> queue_;
  std::uint64_t lost_since_written_ = 0;  // dropped since the last line written
  std::uint64_t pushed_ = 0, done_ = 0;   // events queued and handled (for flush)
  std::uint64_t flush_to_ = 0;            // a flush() waits until done_ reaches it
  static constexpr std::size_t wake_batch = 1024;
  bool stopping_ = false;

  // The writer thread's.
  std::vector<char> buffer_ = std::vector<char>(1 << 20);
  std::ofstream out_;
  std::uint64_t file_bytes_ = 0, sequence_ = 0;
  std::int64_t started_unix_ms_ = 0;
  std::atomic<std::uint64_t> lines_{0}, dropped_{0}, bytes_{0}, files_{0};
  std::thread writer_;
};

}  // namespace mm::server
