// The RESP port's keys (resp.*; docs/operations.md, "The RESP port").
#include "config_keys.hpp"

namespace mm::server {

namespace {

template <class T>
key_spec size_key(const char* name, T resp_settings::*field, const char* help,
                  std::int64_t lo = 1) {
  static const resp_settings d;
  return {name,
          kind::integer,
          std::to_string(d.*field),
          help,
          [name, field, lo](server_config& c, const json& v) {
            c.resp.*field = as_uint<T>(name, v, lo);
          },
          [field](const server_config& c) -> json { return c.resp.*field; }};
}

key_spec duration_key(const char* name, std::chrono::milliseconds resp_settings::*field,
                      const char* help) {
  static const resp_settings d;
  return {name,
          kind::duration,
          seconds_text(d.*field),
          help,
          [name, field](server_config& c, const json& v) {
            c.resp.*field = as_duration(name, v);
            if (c.resp.*field <= std::chrono::milliseconds(0)) bad(name, "must be more than 0");
          },
          [field](const server_config& c) -> json { return seconds_text(c.resp.*field); }};
}

}  // namespace

std::vector<key_spec> with_resp_keys(std::vector<key_spec> keys) {
  using K = kind;
  std::vector<key_spec> resp_keys = {
      {"resp.host", K::text, "127.0.0.1",
       "address of the RESP port (the API's commands for any Redis client); off loopback only "
       "with tokens",
       [](server_config& c, const json& v) { c.resp.host = as_text("resp.host", v); },
       [](const server_config& c) -> json { return c.resp.host; }},
      {"resp.port", K::integer, "auto",
       "the RESP port; auto: 6380 on the demo database, off on any other; -1: off; 0: any "
       "free port (printed at start)",
       [](server_config& c, const json& v) {
         c.resp.port = static_cast<std::int32_t>(as_int("resp.port", v, -1, 65535));
       },
       [](const server_config& c) -> json { return c.effective_resp_port(); }},
      size_key("resp.threads", &resp_settings::threads,
               "threads for the RESP commands that wait (the player table, the matchmakers' "
               "figures); queries and tickets never take one"),
      size_key("resp.max_connections", &resp_settings::max_connections,
               "RESP connections open at most; at the cap a new one takes the place of the one "
               "quiet longest with nothing owed"),
      size_key("resp.max_connections_per_address", &resp_settings::max_connections_per_address,
               "RESP connections from one address at most (same rule at the cap)"),
      duration_key("resp.idle_timeout", &resp_settings::idle_timeout,
                   "a RESP connection with nothing owed and nothing sent this long is closed"),
      duration_key("resp.command_timeout", &resp_settings::command_timeout,
                   "a command begun must be whole within this long, or the connection closes"),
      duration_key("resp.stalled_timeout", &resp_settings::stalled_timeout,
                   "a client that takes none of its replies this long is closed"),
      size_key("resp.max_arguments", &resp_settings::max_arguments,
               "arguments of one command at most"),
      size_key("resp.max_bulk_bytes", &resp_settings::max_bulk_bytes,
               "bytes of one argument at most (a JSON body is one); 4096 before AUTH when "
               "tokens are required"),
      size_key("resp.max_command_bytes", &resp_settings::max_command_bytes,
               "bytes of one command at most, all its arguments: what a connection buffers"),
      size_key("resp.max_pipeline", &resp_settings::max_pipeline,
               "commands of one connection whose replies are owed at most; it is not read "
               "further until some are sent"),
      size_key("resp.max_output_bytes", &resp_settings::max_output_bytes,
               "reply bytes a client has not taken at most; it is not read further until it "
               "takes some")};
  keys.insert(keys.end(), resp_keys.begin(), resp_keys.end());
  return keys;
}

}  // namespace mm::server
