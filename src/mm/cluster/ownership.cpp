#include "mm/cluster/ownership.hpp"

#include <algorithm>
#include <set>

#include "mm/engine/stable_hash.hpp"

namespace mm::cluster {

std::size_t fair_share(std::size_t resources, std::size_t nodes) {
  return nodes == 0 ? 0 : (resources + nodes - 1) / nodes;
}

std::map<std::string, std::string> plan_ownership(const std::vector<std::string>& resources,
                                                  std::vector<planned_node> nodes) {
  std::map<std::string, std::string> plan;
  if (nodes.empty()) return plan;
  // Every node computes the same plan: the nodes in one order, whatever order
  // they were read in.
  std::sort(nodes.begin(), nodes.end(),
            [](const planned_node& a, const planned_node& b) { return a.id < b.id; });
  const std::set<std::string> sorted(resources.begin(), resources.end());
  std::vector<std::size_t> load(nodes.size(), 0);
  for (std::size_t k = 0; k < nodes.size(); ++k)
    for (const auto& p : nodes[k].pinned)
      if (sorted.count(p) && !plan.count(p)) {
        plan[p] = nodes[k].id;
        ++load[k];
      }
  // Two passes: every node up to floor(resources / nodes), then the rest at
  // most one more each, so loads differ by one at most (pins aside).
  const std::size_t floor_share = sorted.size() / nodes.size();
  std::vector<std::size_t> order(nodes.size());
  for (const std::size_t cap : {floor_share, floor_share + 1}) {
    for (const auto& r : sorted) {
      if (plan.count(r)) continue;
      const std::uint64_t rh = fnv1a64(r);
      for (std::size_t k = 0; k < nodes.size(); ++k) order[k] = k;
      auto rank = [&](std::size_t k) { return mix64(fnv1a64(nodes[k].name, rh)); };
      std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        const auto ra = rank(a), rb = rank(b);
        return ra != rb ? ra > rb : nodes[a].id < nodes[b].id;
      });
      for (const std::size_t k : order)
        if (load[k] < cap) {
          plan[r] = nodes[k].id;
          ++load[k];
          break;
        }
    }
  }
  // Pins may have filled every node: the rest to the least loaded.
  for (const auto& r : sorted) {
    if (plan.count(r)) continue;
    const std::size_t k =
        static_cast<std::size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    plan[r] = nodes[k].id;
    ++load[k];
  }
  return plan;
}

}  // namespace mm::cluster
