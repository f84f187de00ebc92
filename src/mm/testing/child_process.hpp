// A child process for the tests and benchmarks that run the real binaries: its
// stdout (and, if asked, stderr) is read line by line; it runs in its own process group so
// that everything it started is killed with it.
#pragma once

#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace mm::test {

// A loopback port free now (the kernel's pick for port 0), for a server that
// must be told its port. Another process may take it before it is used.
inline std::uint16_t free_loopback_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

// The port of a "... listening on HOST:PORT" line (a trailing "/" is ignored).
inline std::uint16_t port_of(const std::string& line) {
  return static_cast<std::uint16_t>(std::stoi(line.substr(line.rfind(':') + 1)));
}

// Between fork and exec only async-signal-safe calls: write(2), no
// formatting library. "child_process: cannot run PATH (errno N)".
inline void say_exec_failed(const char* path, int error) {
  const auto put = [](const char* text) {
    std::size_t n = 0;
    while (text[n] != '\0') ++n;
    [[maybe_unused]] const auto written = ::write(STDOUT_FILENO, text, n);
  };
  char digits[12] = {};
  int at = 10;
  do {
    digits[at--] = static_cast<char>('0' + error % 10);
    error /= 10;
  } while (error > 0 && at >= 0);
  put("child_process: cannot run ");
  put(path);
  put(" (errno ");
  put(digits + at + 1);
  put(")\n");
}

class child_process {
 public:
  explicit child_process(const std::vector<std::string>& argv, bool with_stderr = false) {
    // The child allocates nothing between fork and exec: another thread of
    // the test may hold the allocator's lock at the fork, and the child's
    // copy of that lock is never released (the child would hang before it
    // runs the binary).
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    int out[2];
    if (pipe(out) != 0) throw std::runtime_error("pipe failed");
    pid_ = fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
      setpgid(0, 0);
      prctl(PR_SET_PDEATHSIG, SIGKILL);  // a crashed test leaves no server behind
      dup2(out[1], STDOUT_FILENO);
      if (with_stderr) dup2(out[1], STDERR_FILENO);
      close(out[0]);
      close(out[1]);
      execv(args[0], args.data());
      say_exec_failed(args[0], errno);  // in the output: a test names why, not just "no port"
      _exit(127);
    }
    setpgid(pid_, pid_);
    close(out[1]);
    fd_ = out[0];
  }
  ~child_process() {
    if (pid_ > 0) {
      kill(-pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (fd_ >= 0) close(fd_);
  }
  child_process(const child_process&) = delete;
  child_process& operator=(const child_process&) = delete;

  // The next line, without its newline; empty at the end of output or when
  // nothing came within the timeout.
  std::string read_line(std::chrono::milliseconds timeout = std::chrono::seconds(60)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    timed_out_ = false;
    for (;;) {
      if (const auto nl = buffer_.find('\n'); nl != std::string::npos) {
        std::string line = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        return line;
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      timed_out_ = true;
      if (left.count() <= 0) return {};
      pollfd p{fd_, POLLIN, 0};
      const int ready = poll(&p, 1, static_cast<int>(left.count()));
      if (ready < 0 && errno == EINTR) continue;  // a signal is not the end of the output
      if (ready <= 0) return {};
      timed_out_ = false;
      char chunk[4096];
      const ssize_t n = ::read(fd_, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        eof_ = true;
        std::string rest;
        rest.swap(buffer_);
        return rest;
      }
      buffer_.append(chunk, static_cast<std::size_t>(n));
    }
  }

  // The first line containing `needle` (lines before it are dropped); empty
  // when the output ended or the timeout passed first.
  std::string wait_for_line(const std::string& needle,
                            std::chrono::milliseconds timeout = std::chrono::seconds(60)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return {};
      std::string line = read_line(left);
      if (line.find(needle) != std::string::npos) return line;
      if (line.empty() && !alive()) return {};
    }
  }

  // Everything until the process ends, then its exit status.
  // Reads to the end of the output: an empty line in it is not the end (the
  // process may have exited with its output still in the pipe).
  int finish(std::string* output = nullptr) {
    std::string all;
    while (!eof_) {
      std::string line = read_line();
      if (line.empty() && (eof_ || (timed_out_ && !alive()))) break;
      all += line + "\n";
    }
    if (output) *output = all;
    return wait();
  }

  // SIGTERM, then the exit status; a process still running after `limit` is
  // killed and reported as stop_timed_out, so a server that hangs on its way
  // out fails the test instead of hanging it.
  static constexpr int stop_timed_out = -2;
  int stop(std::chrono::milliseconds limit = std::chrono::seconds(90)) {
    if (!alive()) return exit_status_;  // never kill(-1, ...): that is every process
    kill(pid_, SIGTERM);
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!exited()) {
      if (std::chrono::steady_clock::now() >= deadline) {
        std::fprintf(stderr, "child_process: pid %d did not stop within %lld ms of SIGTERM\n",
                     static_cast<int>(pid_), static_cast<long long>(limit.count()));
        wait_killed();
        return stop_timed_out;
      }
      drain(std::chrono::milliseconds(20));
    }
    return wait();  // it has exited: its group killed, then reaped
  }

  // SIGKILL (no chance to clean up), then the exit status.
  int kill_hard() {
    if (!alive()) return exit_status_;
    kill(pid_, SIGKILL);
    return wait();
  }

  // Kills the whole group, waits for it, and keeps no status.
  void wait_killed() {
    if (pid_ > 0) kill(-pid_, SIGKILL);
    wait();
    exit_status_ = stop_timed_out;
  }

  bool running() { return alive(); }

  // Whether the child has exited, leaving it unreaped (WNOWAIT).
  bool exited() {
    if (pid_ <= 0) return true;
    siginfo_t info{};
    if (waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) != 0)
      return true;
    return info.si_pid == pid_;
  }
  // The output pipe was closed: read_line() has nothing more to give.
  bool output_ended() const { return eof_; }

  pid_t pid() const { return pid_; }

 private:
  bool alive() {
    if (pid_ <= 0) return false;
    int status = 0;
    const pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      exit_status_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      pid_ = -1;
      return false;
    }
    return true;
  }
  // Reads what the process wrote within `timeout` into the line buffer (to
  // at most 1 MiB, the oldest dropped) so that a process writing to a pipe
  // nobody reads is never blocked on its output while it is being stopped.
  void drain(std::chrono::milliseconds timeout) {
    if (fd_ < 0 || eof_) {
      std::this_thread::sleep_for(timeout);  // polling a process
      return;
    }
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(timeout.count())) <= 0) return;
    char chunk[4096];
    const ssize_t n = ::read(fd_, chunk, sizeof chunk);
    if (n <= 0) {
      eof_ = true;
      return;
    }
    buffer_.append(chunk, static_cast<std::size_t>(n));
    constexpr std::size_t keep = std::size_t{1} << 20;
    if (buffer_.size() > keep) buffer_.erase(0, buffer_.size() - keep);
  }
  // Waits for the exit, kills what the child left in its group, then reaps
  // it. The group is killed while the child is a zombie: its pid, the
  // group's id, is not given to another process until it is reaped. Killed
  // after the reap, the id could be a new process's of a test running beside
  // once the pid numbers wrapped (pid_max is 32768 here and threads take pids
  // too: a wrap every few minutes under the suite), and that process would
  // die at its start.
  int wait() {
    if (pid_ > 0) {
      siginfo_t info{};
      while (waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOWAIT) != 0 &&
             errno == EINTR) {
      }
      kill(-pid_, SIGKILL);  // whatever it left behind
      int status = 0;
      waitpid(pid_, &status, 0);
      exit_status_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      pid_ = -1;
    }
    return exit_status_;
  }

  pid_t pid_ = -1;
  int fd_ = -1;
  int exit_status_ = -1;
  std::string buffer_;
  bool eof_ = false;        // the output pipe was closed
  bool timed_out_ = false;  // the last read_line() returned for want of output
};

}  // namespace mm::test
