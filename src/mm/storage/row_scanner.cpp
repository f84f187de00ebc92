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
    std::uint32_t left = fetch;
    for (std::uint32_t b = 0; b < batches; ++b, ++out.batches) {
      const std::uint32_t want = std::min(left, batch_size);
      const std::size_t before = out.rows.size() + out.unreadable;
      std::int64_t& pointer = pointers_[b];
      const std::int64_t began = pointer;
      read_after(pointer, want, out, pointer);
      const auto got = static_cast<std::uint32_t>(out.rows.size() + out.unreadable - before);
      if (got < want) {
        // After the end, from the start up to where this batch began: no row twice.
        ++out.wraps;
        read_up_to(began, want - got, out, pointer);
      }
      left -= want;
    }
  } catch (const std::exception& e) {
    throw store_error(describe() + " failed: " + e.what());
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
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
