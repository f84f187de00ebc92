// The keys of the async traffic's recording (record_queries.*,
// query_recording.hpp).
#include "config_keys.hpp"

namespace mm::server {

std::vector<key_spec> with_recording_keys(std::vector<key_spec> keys) {
  using K = kind;
  static const server_config d;
  std::vector<key_spec> recording = {
      {"record_queries.enabled", K::boolean, "false",
       "record every async query the engines answer and every cache update, enrolment and "
       "removal to rotating files (queries-*.jsonl) for mmsim replay (docs/simulation.md, "
       "\"Replay\")",
       [](server_config& c, const json& v) {
         c.record_queries.enabled = as_bool("record_queries.enabled", v);
       },
       [](const server_config& c) -> json { return c.record_queries.enabled; }},
      {"record_queries.dir", K::text, d.record_queries.dir,
       "the async recording's directory (made when missing; relative to the working directory)",
       [](server_config& c, const json& v) {
         c.record_queries.dir = as_text("record_queries.dir", v);
       },
       [](const server_config& c) -> json { return c.record_queries.dir; }},
      {"record_queries.max_file_bytes", K::integer, std::to_string(d.record_queries.max_file_bytes),
       "an async recording file is closed and the next one started at this size",
       [](server_config& c, const json& v) {
         c.record_queries.max_file_bytes =
             as_uint<std::uint64_t>("record_queries.max_file_bytes", v, 4096);
       },
       [](const server_config& c) -> json { return c.record_queries.max_file_bytes; }},
      {"record_queries.max_files", K::integer, std::to_string(d.record_queries.max_files),
       "async recording files kept: the oldest beyond these are deleted",
       [](server_config& c, const json& v) {
         c.record_queries.max_files = as_uint<std::uint32_t>("record_queries.max_files", v, 1);
       },
       [](const server_config& c) -> json { return c.record_queries.max_files; }},
  };
  keys.insert(keys.end(), recording.begin(), recording.end());
  return keys;
}

}  // namespace mm::server
