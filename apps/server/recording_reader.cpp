#include "recording_reader.hpp"

#include <algorithm>
#include <fstream>
#include <set>
#include <unordered_map>

#include "mm/actors/session_queue_registry.hpp"
#include "mm/engine/error.hpp"
#include "mm/session/public_id.hpp"
#include "recording_lines.hpp"
#include "session_json.hpp"

namespace mm::server {

namespace {

namespace fs = std::filesystem;

[[noreturn]] void refuse(const std::string& what) {
  refuse_recording(what);
}

// The parts of a header that must be the same in every file: what the
// queues were.
json configuration_of(const json& header) {
  json c = header;
  // A directory may span an upgrade: each line says what it is.
  for (const char* k : {"file", "started_unix_ms", "version"}) c.erase(k);
  return c;
}

void read_header(const json& h, const line_reader& at, recording& r) {
  const auto format = h.find("format");
  if (format == h.end() || *format != recording_format)
    refuse(at.where() + ": not a ticket recording (format must be \"" + recording_format + "\")");
  const auto version = h.find("version");
  if (version == h.end() || !version->is_number_integer() ||
      version->get<std::int64_t>() < oldest_readable_recording_version ||
      version->get<std::int64_t>() > recording_format_version)
    refuse(at.where() + ": recording format version " +
           (version == h.end() ? std::string("missing") : version->dump().substr(0, 32)) +
           ": this mmsim reads versions " + std::to_string(oldest_readable_recording_version) +
           " to " + std::to_string(recording_format_version));
  if (r.header.is_null()) {
    r.header = h;
    try {
      read_datacenters("datacenters", h.at("datacenters"), r.settings);
      r.settings.queues = read_queues("queues", h.at("queues"));
      r.settings.queue_template = h.value("queue_template", std::string());
      r.settings.detour_factor = h.at("detour_factor").get<double>();
      r.recorded_queues = h.at("recorded").get<std::vector<std::string>>();
      check(r.settings);
    } catch (const json::exception& e) {
      refuse(at.where() + ": header: " + e.what());
    } catch (const std::exception& e) {
      refuse(at.where() + ": header: " + e.what());
    }
  } else if (configuration_of(h) != configuration_of(r.header)) {
    refuse(at.where() + ": recorded with other queues or datacenters than " +
           r.files.front().string() + ": replay the two apart");
  }
}

sim::ticket_end read_outcome(const json& o, const std::string& where) {
  sim::ticket_end e;
  try {
    const std::string state = o.at("state").get<std::string>();
    e.queue = o.at("queue").get<std::string>();
    if (state == "matched") {
      e.state = session::ticket_state::matched;
      const json& m = o.at("match");
      for (const auto& t : m.at("tickets")) e.match.push_back(t.get<std::string>());
      std::sort(e.match.begin(), e.match.end());
      e.mmr_spread = m.at("mmr_spread").get<double>();
      const json& rtt = m.at("worst_rtt_ms");
      e.worst_rtt_ms = rtt.is_null() ? -1 : rtt.get<double>();
      e.bot = m.at("bot_match").get<bool>();
      e.placed = m.contains("running_match");
    } else if (state == "cancelled") {
      e.state = session::ticket_state::cancelled;
    } else if (state == "expired") {
      e.state = session::ticket_state::expired;
    } else if (state == "failed") {
      e.state = session::ticket_state::failed;
    } else {
      refuse(where + ": outcome.state '" + state.substr(0, 32) + "' is not an outcome");
    }
  } catch (const json::exception& x) {
    refuse(where + ": outcome: " + x.what());
  }
  return e;
}

}  // namespace

recording read_recording(const fs::path& file_or_dir, const recording_limits& limits) {
  recording r;
  r.files = recording_files_at(file_or_dir, "recording", limits);
  std::unordered_map<std::string, std::size_t> by_id;
  std::string line;
  bool any_event = false;
  std::uint64_t ticks = 0;
  for (const auto& f : r.files) {
    line_reader in(f, limits);
    if (!in.next(line)) refuse(f.string() + ": empty, no header");
    read_header(parse_recording_line(line, in), in, r);
    while (in.next(line)) {
      const json v = parse_recording_line(line, in);
      const std::int64_t t = read_recording_time(v, in);
      const std::string event = text_field(v, "event");
      ++r.events;
      if (!any_event) r.first_unix_ms = t;
      any_event = true;
      r.first_unix_ms = std::min(r.first_unix_ms, t);
      r.last_unix_ms = std::max(r.last_unix_ms, t);
      if (event == "gap") {
        const auto n = v.find("dropped");
        if (n == v.end() || !n->is_number_unsigned())
          refuse(in.where() + ": dropped must be a count");
        r.dropped += n->get<std::uint64_t>();
      } else if (event == "created") {
        const auto id = v.find("ticket");
        if (id == v.end() || !id->is_string() ||
            !session::parse_public_id(id->get_ref<const std::string&>()))
          refuse(in.where() + ": ticket must be a ticket id");
        if (!v.contains("body")) refuse(in.where() + ": body is missing");
        recorded_ticket rt;
        rt.id = id->get<std::string>();
        rt.created_unix_ms = t;
        try {
          ticket_body b = read_ticket_body(v["body"]);
          rt.queues.push_back(b.queue);
          for (const auto& q : b.ticket.also_queues) rt.queues.push_back(q);
          rt.ticket = std::move(b.ticket);
        } catch (const bad_request& e) {
          refuse(in.where() + ": body." + e.what());
        }
        if (by_id.count(rt.id)) refuse(in.where() + ": ticket " + rt.id + " created twice");
        if (r.tickets.size() == limits.max_tickets)
          refuse(in.where() + ": more than " + std::to_string(limits.max_tickets) +
                 " tickets, the most a replay holds");
        by_id[rt.id] = r.tickets.size();
        r.tickets.push_back(std::move(rt));
      } else if (event == "left") {
        const auto o = v.find("outcome");
        if (o == v.end() || !o->is_object()) refuse(in.where() + ": outcome must be an object");
        const auto id = o->find("ticket");
        const auto it =
            id != o->end() && id->is_string() ? by_id.find(id->get<std::string>()) : by_id.end();
        sim::ticket_end e = read_outcome(*o, in.where());
        if (it == by_id.end()) {
          ++r.orphans;  // created in a file pruned since, or before the recording started
          continue;
        }
        e.at_ms = t;
        r.tickets[it->second].outcome = std::move(e);
      } else if (event == "tick" || event == "queue" || event == "late" || event == "cancel") {
        const auto q = v.find("queue");
        if (q == v.end() || !q->is_string() || q->get_ref<const std::string&>().size() > 200)
          refuse(in.where() + ": queue must be a queue's name");
        const std::string& name = q->get_ref<const std::string&>();
        if (event == "late" || event == "cancel") {
          const auto id = v.find("ticket");
          if (id == v.end() || !id->is_string() ||
              !session::parse_public_id(id->get_ref<const std::string&>()))
            refuse(in.where() + ": ticket must be a ticket id");
          if (++ticks == limits.max_ticks + 1)
            refuse(in.where() + ": more than " + std::to_string(limits.max_ticks) +
                   " ticks, the most a replay holds");
          (event == "late" ? r.late : r.cancels)[id->get<std::string>()].emplace_back(name, t);
          continue;
        }
        if (event == "tick") {
          if (++ticks == limits.max_ticks + 1)
            refuse(in.where() + ": more than " + std::to_string(limits.max_ticks) +
                   " ticks, the most a replay holds");
          r.ticks[name].push_back(t);
          continue;
        }
        const auto seed = v.find("seed");
        std::uint64_t value = 0;
        if (seed == v.end() || !seed->is_string() || seed->get_ref<const std::string&>().empty() ||
            seed->get_ref<const std::string&>().size() > 20 ||
            seed->get_ref<const std::string&>().find_first_not_of("0123456789") !=
                std::string::npos)
          refuse(in.where() + ": seed must be a decimal number as text");
        try {
          value = std::stoull(seed->get<std::string>());
        } catch (const std::exception&) {
          refuse(in.where() + ": seed must fit 64 bits");
        }
        r.seeds.emplace(name, value);  // the first start's
      } else {
        refuse(in.where() + ": event must be created, left, gap, queue, tick, late or cancel");
      }
    }
  }
  std::stable_sort(r.tickets.begin(), r.tickets.end(),
                   [](const recorded_ticket& a, const recorded_ticket& b) {
                     return a.created_unix_ms < b.created_unix_ms;
                   });
  for (auto& [name, times] : r.ticks) std::sort(times.begin(), times.end());
  check_recording_span(r.first_unix_ms, r.last_unix_ms, limits, file_or_dir.string());
  return r;
}

std::int64_t replay_epoch_unix_ms(const recording& r) {
  return r.first_unix_ms - r.first_unix_ms % 3'600'000;
}

sim::session_replay_config replay_config_of(const recording& r, const session_settings& settings,
                                            std::uint64_t seed) {
  sim::session_replay_config c;
  c.latency = latency_model_of(settings);
  c.recorded_queues = r.settings.queues;
  c.seed = seed;
  const std::int64_t epoch = replay_epoch_unix_ms(r);
  c.end_ms = r.last_unix_ms - epoch;
  std::optional<session::queue_config> default_queue;
  for (const auto& q : settings.queues)
    if (!settings.queue_template.empty() && q.name == settings.queue_template) default_queue = q;
  actors::session_queue_registry registry(settings.queues, default_queue, settings.max_queues);
  c.tickets.reserve(r.tickets.size());
  for (const auto& t : r.tickets) {
    sim::replay_ticket rt;
    rt.id = t.id;
    rt.created_ms = t.created_unix_ms - epoch;
    rt.request = actors::to_request(t.ticket);
    rt.recorded = t.outcome;
    if (rt.recorded.state != session::ticket_state::waiting) rt.recorded.at_ms -= epoch;
    for (std::size_t i = 0; i < t.queues.size() && rt.refused.empty(); ++i) {
      bool made = false;
      const auto slot = registry.place(
          t.queues[i], t.ticket, i == 0 ? "queue" : "queues[" + std::to_string(i) + "]", made);
      if (slot)
        rt.queues.push_back(registry.config(*slot).name);
      else
        rt.refused = slot.error().context().match_elements<std::string>()
                         ? slot.error().context().get_as<std::string>(0)
                         : "the queue cannot be placed";
    }
    if (!rt.refused.empty()) rt.queues = {t.queues.front()};
    c.tickets.push_back(std::move(rt));
  }
  std::set<std::string> used;
  for (const auto& t : c.tickets)
    if (t.refused.empty()) used.insert(t.queues.begin(), t.queues.end());
  for (std::size_t s = 0; s < registry.size(); ++s) {
    const session::queue_config& q = registry.config(s);
    if (!used.count(q.name)) continue;  // no ticket of the recording waits in it
    c.queues.push_back(q);
    // The recorded moments of the match loop, when the loop's period is
    // the recorded one (else the replayed queue ticks on its own grid).
    const auto ticks = r.ticks.find(q.name);
    const std::string base = q.name.substr(0, q.name.find('.'));
    const auto recorded = std::find_if(
        r.settings.queues.begin(), r.settings.queues.end(),
        [&](const session::queue_config& x) { return x.name == q.name || x.name == base; });
    if (ticks == r.ticks.end() || recorded == r.settings.queues.end() || recorded->tick != q.tick)
      continue;
    auto& times = c.ticks[q.name];
    for (const std::int64_t t : ticks->second) times.push_back(t - epoch);
    if (const auto s0 = r.seeds.find(q.name); s0 != r.seeds.end()) c.seeds[q.name] = s0->second;
  }
  // A ticket that reached a queue replayed at its recorded ticks after one
  // of them joins after it (a multi-queue ticket: after the last such tick).
  for (auto& t : c.tickets) {
    const auto late = r.late.find(t.id);
    if (late == r.late.end()) continue;
    for (const auto& [queue, at] : late->second)
      if (c.ticks.count(queue) && at - epoch >= t.created_ms)
        t.late_after_ms = std::max(t.late_after_ms, at - epoch);
  }
  // A ticket its owner cancelled leaves at its queue's own moment of the
  // cancel, when that queue is replayed at its recorded ticks (a
  // multi-queue ticket: at the earliest of its queues' moments).
  for (auto& t : c.tickets) {
    const auto cancel = r.cancels.find(t.id);
    if (cancel == r.cancels.end() || t.recorded.state != session::ticket_state::cancelled) continue;
    for (const auto& [queue, at] : cancel->second)
      if (c.ticks.count(queue) && at - epoch >= t.created_ms && at - epoch <= t.recorded.at_ms)
        t.cancelled_ms = t.cancelled_ms < 0 ? at - epoch : std::min(t.cancelled_ms, at - epoch);
  }
  return c;
}

}  // namespace mm::server
