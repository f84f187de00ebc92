// A real browser for the tests of web pages: Debian's headless Chromium,
// driven through chromedriver's W3C WebDriver protocol (plain HTTP + JSON).
#pragma once

#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "mm/testing/child_process.hpp"
#include "mm/testing/temp_dir.hpp"

namespace mm::test {

using json = nlohmann::json;

inline constexpr const char* chromium_path = "/usr/bin/chromium";
inline constexpr const char* chromedriver_path = "/usr/bin/chromedriver";
inline constexpr const char* element_key = "element-6066-11e4-a52e-4f735466cecf";

inline std::uint16_t free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

// One WebDriver session on a chromedriver of our own.
class browser {
 public:
  explicit browser(const temp_dir& dir) : port_(free_port()) {
    driver_ = std::make_unique<child_process>(
        std::vector<std::string>{chromedriver_path, "--port=" + std::to_string(port_)}, true);
    REQUIRE_FALSE(
        driver_->wait_for_line("was started successfully", std::chrono::seconds(30)).empty());
    const json caps = {
        {"capabilities",
         {{"alwaysMatch",
           {{"browserName", "chrome"},
            {"goog:chromeOptions",
             {{"binary", chromium_path},
              {"args",
               {"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-dev-shm-usage", "--window-size=1300,1500",
                "--user-data-dir=" + dir.file("chromium-profile")}}}}}}}}};
    const json s = call("POST", "/session", caps);
    session_ = s["value"]["sessionId"].get<std::string>();
  }
  ~browser() {
    if (!session_.empty()) client().Delete("/session/" + session_);
  }

  void open(const std::string& url) { call("POST", path("/url"), {{"url", url}}); }

  json script(const std::string& js) {
    return call("POST", path("/execute/sync"), {{"script", js}, {"args", json::array()}})["value"];
  }

  std::string element(const std::string& css) {
    return call("POST", path("/element"),
                {{"using", "css selector"}, {"value", css}})["value"][element_key];
  }
  void type(const std::string& css, const std::string& text) {
    const std::string e = element(css);
    call("POST", path("/element/" + e + "/clear"), json::object());
    call("POST", path("/element/" + e + "/value"), {{"text", text}});
  }
  void click(const std::string& css) {
    call("POST", path("/element/" + element(css) + "/click"), json::object());
  }

  // Evaluates `js` until it returns true (the page polls every 2 s).
  bool wait_for(const std::string& js, std::chrono::seconds timeout = std::chrono::seconds(60)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      if (script("return Boolean(" + js + ");") == true) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));  // polling the page
    }
    return false;
  }

  void screenshot(const std::string& file) {
    const std::string b64 = call("GET", path("/screenshot"), nullptr)["value"];
    static const std::string abc =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string bytes;
    unsigned v = 0;
    int bits = -8;
    for (char c : b64) {
      const auto p = abc.find(c);
      if (p == std::string::npos) continue;
      v = (v << 6) | static_cast<unsigned>(p);
      bits += 6;
      if (bits >= 0) {
        bytes.push_back(static_cast<char>((v >> bits) & 0xff));
        bits -= 8;
      }
    }
    std::ofstream(file, std::ios::binary) << bytes;
  }

 private:
  httplib::Client client() const {
    httplib::Client c("127.0.0.1", port_);
    c.set_read_timeout(std::chrono::seconds(60));
    return c;
  }
  std::string path(const std::string& rest) const { return "/session/" + session_ + rest; }
  json call(const std::string& method, const std::string& p, const json& body) {
    auto r = method == "GET" ? client().Get(p) : client().Post(p, body.dump(), "application/json");
    INFO(method << " " << p);
    REQUIRE(r);
    INFO(r->body);
    REQUIRE(r->status == 200);
    return json::parse(r->body);
  }

  std::uint16_t port_;
  std::unique_ptr<child_process> driver_;
  std::string session_;
};

}  // namespace mm::test
