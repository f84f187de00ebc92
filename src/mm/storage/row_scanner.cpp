#include "mm/storage/row_scanner.hpp"

#include <chrono>

#include "mm/storage/database.hpp"

namespace mm {

scan_result row_scanner::scan(std::uint32_t fetch, std::uint32_t batch_size) {
  scan_result out;
  scan_into(fetch, batch_size, out);
  return out;
}

void row_scanner::scan_into(std::uint32_t fetch, std::uint32_t batch_size, scan_result& out) {
  const auto start = std::chrono::steady_clock::now();
  out.rows.clear();
  out.unreadable = 0;
  out.reports.clear();
  out.batches = out.wraps = 0;
  out.seconds = 0;
  if (fetch == 0 || batch_size == 0) return;
  try {
    const auto range = id_range();
    if (!range) return;  // empty table
    const auto [lo, hi] = *range;
    auto random_pointer = [&, lo = lo, hi = hi] {
      // Just below a random id, so the batch starts with that id's row.
      const auto span = static_cast<std::uint64_t>(hi - lo) + 1;
      return lo + static_cast<std::int64_t>(rng_.below(span)) - 1;
    };

    const std::uint32_t batches = (fetch + batch_size - 1) / batch_size;
    while (pointers_.size() < batches) pointers_.push_back(random_pointer());
    for (auto& p : pointers_)
      if (rng_.unit() < repoint_chance) p = random_pointer();

    out.rows.reserve(fetch);
    wants_.assign(batches, batch_size);
    if (fetch % batch_size) wants_.back() = fetch % batch_size;
    began_.assign(pointers_.begin(), pointers_.begin() + batches);
    got_.assign(batches, 0);
    read_batches(std::span(pointers_).first(batches), wants_, out, got_);
    out.batches = batches;
    for (std::uint32_t b = 0; b < batches; ++b) {
      if (got_[b] >= wants_[b]) continue;
      // After the end, from the start up to where this batch began: no row twice.
      ++out.wraps;
      read_up_to(began_[b], wants_[b] - got_[b], out, pointers_[b]);
    }
  } catch (const std::exception& e) {
    throw store_error(describe() + " failed: " + e.what());
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void row_scanner::read_batches(std::span<std::int64_t> pointers,
                               const std::vector<std::uint32_t>& wants, scan_result& out,
                               std::vector<std::uint32_t>& got) {
  for (std::size_t b = 0; b < pointers.size(); ++b) {
    const std::size_t before = out.rows.size() + out.unreadable;
    read_after(pointers[b], wants[b], out, pointers[b]);
    got[b] = static_cast<std::uint32_t>(out.rows.size() + out.unreadable - before);
  }
}

void row_scanner::unreadable(scan_result& out, std::string why) {
  ++out.unreadable;
  if (out.reports.size() < max_reports) out.reports.push_back(std::move(why));
}

void row_scanner::shuffle(std::vector<player_row>& rows, std::uint64_t seed) {
  rng order(seed ^ 0x5bd1e995u);
  for (std::size_t i = rows.size(); i > 1; --i) std::swap(rows[i - 1], rows[order.below(i)]);
}

bool valid_sql_identifier(const std::string& name) {
  if (name.empty() || name.size() > 128) return false;
  if (name[0] >= '0' && name[0] <= '9') return false;
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'))
      return false;
  return true;
}

}  // namespace mm
