// The groups of a journal batch (ticket_journal.hpp, write_journal): what
// both backends share of them. A group is left out whole when one of its
// contested rows no longer waits: its outcomes and its events go, the rest
// of the batch is written as it is.
#include <algorithm>
#include <utility>

#include "mm/engine/error.hpp"
#include "mm/storage/ticket_journal.hpp"

namespace mm {

namespace {

bool sorted_has(const std::vector<std::uint64_t>& v, std::uint64_t x) {
  return std::binary_search(v.begin(), v.end(), x);
}

}  // namespace

std::vector<std::uint64_t> contested_rows(const journal_batch& b) {
  std::vector<std::uint64_t> created, out;
  for (const auto& o : b.finished) {
    if (!o.contested) continue;
    if (o.group == 0)
      throw error(errc::invalid_argument,
                  "the ticket journal: a contested outcome needs a group (ticket serial " +
                      std::to_string(o.id) + ")");
    if (created.empty() && !b.created.empty()) {
      for (const auto& c : b.created) created.push_back(c.id);
      std::sort(created.begin(), created.end());
    }
    if (!sorted_has(created, o.id)) out.push_back(o.id);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<std::uint32_t> groups_of(const journal_batch& b,
                                     const std::vector<std::uint64_t>& gone) {
  std::vector<std::uint32_t> out;
  for (const auto& o : b.finished)
    if (o.contested && sorted_has(gone, o.id)) out.push_back(o.group);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<std::uint32_t> repeated_groups(const journal_batch& b) {
  // (serial, position): sorted, a serial's first outcome comes first.
  std::vector<std::pair<std::uint64_t, std::size_t>> at;
  for (std::size_t i = 0; i < b.finished.size(); ++i)
    if (b.finished[i].contested) at.emplace_back(b.finished[i].id, i);
  std::sort(at.begin(), at.end());
  std::vector<std::uint32_t> out;
  for (std::size_t i = 1; i < at.size(); ++i)
    if (at[i].first == at[i - 1].first) out.push_back(b.finished[at[i].second].group);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<std::uint32_t> merged(std::vector<std::uint32_t> a,
                                  const std::vector<std::uint32_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  std::sort(a.begin(), a.end());
  a.erase(std::unique(a.begin(), a.end()), a.end());
  return a;
}

std::vector<std::uint64_t> not_waiting(const std::vector<std::uint64_t>& rows,
                                       std::vector<std::uint64_t> waiting) {
  std::sort(waiting.begin(), waiting.end());
  std::vector<std::uint64_t> out;
  for (const std::uint64_t r : rows)
    if (!sorted_has(waiting, r)) out.push_back(r);
  return out;
}

journal_batch without_groups(const journal_batch& b, const std::vector<std::uint32_t>& groups) {
  const auto lost = [&](std::uint32_t g) {
    return g != 0 && std::binary_search(groups.begin(), groups.end(), g);
  };
  journal_batch out;
  out.event_stream = b.event_stream;
  out.created = b.created;
  out.backfills = b.backfills;
  out.released = b.released;
  for (const auto& o : b.finished)
    if (!lost(o.group)) out.finished.push_back(o);
  for (const auto& e : b.events)
    if (!lost(e.group)) out.events.push_back(e);
  return out;
}

}  // namespace mm
