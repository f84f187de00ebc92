#include "resp_protocol.hpp"

#include <cctype>
#include <charconv>

namespace mm::server {

namespace {

using status = resp_parse::status;

resp_parse failed(std::string why) {
  resp_parse p;
  p.result = status::error;
  p.error = std::move(why);
  return p;
}

resp_parse need(std::size_t at_least) {
  resp_parse p;
  p.result = status::incomplete;
  p.bytes = at_least;
  return p;
}

// A header line's number after its type byte, at `at` (the type byte's
// position): "*3\r\n". Sets `next` past the CRLF. Numbers are 1 to 19
// digits with an optional '-'; anything else is an error.
enum class line { ok, short_data, bad };
line read_number(std::string_view data, std::size_t at, long long& n, std::size_t& next) {
  const std::size_t max_line = 22;  // type, sign, 19 digits, CR
  const std::size_t end = data.substr(0, at + max_line + 1).find('\r', at + 1);
  if (end == std::string_view::npos)
    return data.size() - at > max_line ? line::bad : line::short_data;
  if (end - at > max_line) return line::bad;
  if (end + 1 >= data.size()) return line::short_data;
  if (data[end + 1] != '\n') return line::bad;
  const char* first = data.data() + at + 1;
  const char* last = data.data() + end;
  if (first == last) return line::bad;
  const auto [ptr, ec] = std::from_chars(first, last, n);
  if (ec != std::errc() || ptr != last) return line::bad;
  next = end + 2;
  return line::ok;
}

bool is_space(char c) {
  return c == ' ' || c == '\t';
}

resp_parse read_inline(std::string_view data, const resp_read_limits& limits,
                       std::vector<std::string>& args) {
  const std::size_t nl = data.find('\n');
  if (nl == std::string_view::npos)
    return data.size() > limits.max_inline_bytes ? failed("too big inline request") : need(0);
  if (nl > limits.max_inline_bytes) return failed("too big inline request");
  std::string_view text = data.substr(0, nl);
  if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
  args.clear();
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && is_space(text[i])) ++i;
    if (i == text.size()) break;
    std::size_t j = i;
    while (j < text.size() && !is_space(text[j])) ++j;
    if (args.size() == limits.max_arguments) return failed("too many arguments in inline request");
    args.emplace_back(text.substr(i, j - i));
    i = j;
  }
  resp_parse p;
  p.result = status::complete;
  p.bytes = nl + 1;
  p.inline_form = true;
  return p;
}

}  // namespace

resp_parse read_command(std::string_view data, const resp_read_limits& limits,
                        std::vector<std::string>& args) {
  if (data.empty()) return need(1);
  if (data[0] != '*') return read_inline(data, limits, args);
  long long count = 0;
  std::size_t at = 0;
  switch (read_number(data, 0, count, at)) {
    case line::short_data:
      return need(0);
    case line::bad:
      return failed("invalid multibulk length");
    case line::ok:
      break;
  }
  if (count < 0 || static_cast<unsigned long long>(count) > limits.max_arguments)
    return failed("invalid multibulk length (at most " + std::to_string(limits.max_arguments) +
                  " arguments)");
  // The lengths are checked before anything is kept; the strings are made
  // only when the whole command is in.
  std::size_t pos = at;
  std::vector<std::pair<std::size_t, std::size_t>> spans;
  spans.reserve(static_cast<std::size_t>(count));
  for (long long i = 0; i < count; ++i) {
    if (pos >= data.size()) return need(0);
    if (data[pos] != '$')
      return failed(std::string("expected '$', got '") +
                    (data[pos] >= 32 && data[pos] < 127 ? std::string(1, data[pos]) : "?") + "'");
    long long len = 0;
    std::size_t body = 0;
    switch (read_number(data, pos, len, body)) {
      case line::short_data:
        return need(0);
      case line::bad:
        return failed("invalid bulk length");
      case line::ok:
        break;
    }
    if (len < 0 || static_cast<unsigned long long>(len) > limits.max_bulk_bytes)
      return failed("invalid bulk length (at most " + std::to_string(limits.max_bulk_bytes) +
                    " bytes)");
    const std::size_t end = body + static_cast<std::size_t>(len);
    if (end + 2 > data.size()) return need(end + 2);
    if (data[end] != '\r' || data[end + 1] != '\n') return failed("bulk not followed by CRLF");
    spans.emplace_back(body, static_cast<std::size_t>(len));
    pos = end + 2;
  }
  args.resize(spans.size());
  for (std::size_t i = 0; i < spans.size(); ++i)
    args[i].assign(data.data() + spans[i].first, spans[i].second);
  resp_parse p;
  p.result = status::complete;
  p.bytes = pos;
  return p;
}

namespace resp {

namespace {
void header(std::string& out, char type, long long n) {
  char buf[24];
  buf[0] = type;
  const auto [end, ec] = std::to_chars(buf + 1, buf + sizeof buf - 2, n);
  (void)ec;  // 21 characters always hold a long long
  out.append(buf, end);
  out += "\r\n";
}
}  // namespace

void simple(std::string& out, std::string_view text) {
  out += '+';
  out += text;
  out += "\r\n";
}

void error(std::string& out, std::string_view code, std::string_view message) {
  const std::size_t from = out.size();
  out += '-';
  out += code;
  out += ' ';
  out += message;
  for (std::size_t i = from; i < out.size(); ++i)
    if (out[i] == '\r' || out[i] == '\n') out[i] = ' ';
  out += "\r\n";
}

std::string error_reply(std::string_view code, std::string_view message) {
  std::string out;
  error(out, code, message);
  return out;
}

std::string upper(std::string word) {
  for (char& c : word) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return word;
}

void integer(std::string& out, long long n) {
  header(out, ':', n);
}

void bulk(std::string& out, std::string_view bytes) {
  header(out, '$', static_cast<long long>(bytes.size()));
  out += bytes;
  out += "\r\n";
}

void null(std::string& out, int protocol) {
  out += protocol >= 3 ? "_\r\n" : "$-1\r\n";
}

void null_array(std::string& out, int protocol) {
  out += protocol >= 3 ? "_\r\n" : "*-1\r\n";
}

void array(std::string& out, std::size_t n) {
  header(out, '*', static_cast<long long>(n));
}

void map(std::string& out, std::size_t pairs, int protocol) {
  if (protocol >= 3)
    header(out, '%', static_cast<long long>(pairs));
  else
    header(out, '*', static_cast<long long>(2 * pairs));
}

void push(std::string& out, std::size_t n, int protocol) {
  header(out, protocol >= 3 ? '>' : '*', static_cast<long long>(n));
}

}  // namespace resp

}  // namespace mm::server
