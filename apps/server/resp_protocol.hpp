// The Redis serialization protocol (RESP2 and RESP3) as the RESP port reads
// and writes it: no sockets here, so the reader is fuzzed on its own
// (tests/fuzz/fuzz_resp_reader.cpp).
//
// A command is what every Redis client sends: an array of bulk strings
// ("*2\r\n$4\r\nPING\r\n$2\r\nhi\r\n"), or an inline line ("PING hi\r\n", as
// typed into telnet). The reader is bounded before it allocates: an array
// longer than `max_arguments`, a bulk longer than `max_bulk_bytes`, an inline
// line longer than `max_inline_bytes` and any nesting (an array inside a
// command) are protocol errors, decided from the header alone, so a header
// announcing 2 GiB costs nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mm::server {

struct resp_read_limits {
  std::size_t max_arguments = 1024;
  std::size_t max_bulk_bytes = 1u << 20;
  std::size_t max_inline_bytes = 64 * 1024;
};

struct resp_parse {
  enum class status { complete, incomplete, error };
  status result = status::incomplete;
  // complete: the bytes the command took. incomplete: the least the buffer
  // must hold before trying again (0: unknown, try at the next read).
  std::size_t bytes = 0;
  std::string error;  // error: why, for the "-ERR Protocol error: ..." reply
  bool inline_form = false;
};

// Reads the first command of `data` into `args` (its contents replaced).
// Never reads past `data`; never throws.
resp_parse read_command(std::string_view data, const resp_read_limits& limits,
                        std::vector<std::string>& args);

// Replies, appended to `out`. `protocol` is the connection's (2 or 3): RESP3
// has its own null, map and push types; RESP2 says the same with a null
// bulk and arrays.
namespace resp {
void simple(std::string& out, std::string_view text);
// "-CODE message": CR and LF in the message become spaces (a reply is one line).
void error(std::string& out, std::string_view code, std::string_view message);
void integer(std::string& out, long long n);
void bulk(std::string& out, std::string_view bytes);
void null(std::string& out, int protocol);
void null_array(std::string& out, int protocol);
void array(std::string& out, std::size_t n);
void map(std::string& out, std::size_t pairs, int protocol);
void push(std::string& out, std::size_t n, int protocol);
// An error as a whole reply.
std::string error_reply(std::string_view code, std::string_view message);
// A command's name or option as compared (RESP's words ignore case).
std::string upper(std::string word);
}  // namespace resp

}  // namespace mm::server
