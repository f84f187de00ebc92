// Fuzz target: any bytes through the RESP port's command reader, command
// after command as the port reads them. It never reads past what it was
// given and never allocates past its bounds (ASan would say); a command it
// reads is within them, re-encoded reads back the same, and every shorter
// prefix of it is "incomplete", never an error or another command (so a
// command split over many reads means what it means in one).
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_target.hpp"
#include "resp_protocol.hpp"

namespace {

std::string encoded(const std::vector<std::string>& args) {
  std::string out;
  mm::server::resp::array(out, args.size());
  for (const auto& a : args) mm::server::resp::bulk(out, a);
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace mm::server;
  const resp_read_limits limits{16, 256, 512};
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> args, again;
  for (int commands = 0; commands < 64 && !rest.empty(); ++commands) {
    const resp_parse p = read_command(rest, limits, args);
    if (p.result == resp_parse::status::error) {
      mm::fuzz::require(!p.error.empty() && p.error.size() < 200);
      break;
    }
    if (p.result == resp_parse::status::incomplete) {
      mm::fuzz::require(p.bytes == 0 || p.bytes > rest.size());
      break;
    }
    mm::fuzz::require(p.bytes > 0 && p.bytes <= rest.size());
    mm::fuzz::require(args.size() <= limits.max_arguments);
    for (const auto& a : args)
      mm::fuzz::require(a.size() <=
                        (p.inline_form ? limits.max_inline_bytes : limits.max_bulk_bytes));
    if (!p.inline_form) {
      for (std::size_t cut = 1; cut < p.bytes; cut += 1 + cut / 8)
        mm::fuzz::require(read_command(rest.substr(0, cut), limits, again).result ==
                          resp_parse::status::incomplete);
    }
    if (!args.empty()) {
      const std::string back = encoded(args);
      const resp_parse q = read_command(back, resp_read_limits{16, 1024, 1024}, again);
      mm::fuzz::require(q.result == resp_parse::status::complete && q.bytes == back.size() &&
                        again == args);
    }
    rest.remove_prefix(p.bytes);
  }
  return 0;
}

void mm::fuzz::write_seeds(const std::string& dir) {
  const char* seeds[] = {
      "*1\r\n$4\r\nPING\r\n",
      "*2\r\n$7\r\nMM.FIND\r\n$28\r\n{\"attacker_id\":5,\"mmr\":1500}\r\n*1\r\n$4\r\nQUIT\r\n",
      "PING hello\r\nMM.TICKET.GET 0123456789abcdef WAIT 5\r\n",
      "*1\r\n$2147483648\r\n",
      "*99999\r\n",
      "*1\r\n*1\r\n$1\r\nx\r\n",
      "*-1\r\n$-1\r\n",
      "*2\r\n$3\r\nabc\r\n$3\r\nab",
      "POST / HTTP/1.1\r\nHost: example\r\n\r\n",
      "*1\r\n$01\r\nx\r\n",
  };
  int i = 0;
  for (const char* s : seeds) save(dir + "/seed-" + std::to_string(i++), s);
}
