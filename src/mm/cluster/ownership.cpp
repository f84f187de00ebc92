#include "mm/cluster/ownership.hpp"

#include <algorithm>
#include <set>

#include "mm/engine/stable_hash.hpp"

namespace mm::cluster {

std::size_t fair_share(std::size_t resources, std::size_t nodes) {
  return nodes == 0 ? 0 : (resources + nodes - 1) / nodes;
}

std::string resource_kind(const std::string& resource) {
  return resource.substr(0, resource.find('-'));
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
  // Resources by kind, each kind in name order.
  std::map<std::string, std::vector<std::string>> kinds;
  for (const auto& r : sorted) kinds[resource_kind(r)].push_back(r);
  std::vector<std::size_t> load(nodes.size(), 0);
  std::map<std::string, std::vector<std::size_t>> kind_load;
  for (const auto& [kind, members] : kinds) kind_load[kind].assign(nodes.size(), 0);
  for (std::size_t k = 0; k < nodes.size(); ++k)
    for (const auto& p : nodes[k].pinned)
      if (sorted.count(p) && !plan.count(p)) {
        plan[p] = nodes[k].id;
        ++load[k];
        ++kind_load[resource_kind(p)][k];
      }
  // Each kind in two passes: every node up to floor(kind's resources /
  // nodes), then the rest at most one more each, so each kind's loads
  // differ by one at most (pins aside). The second pass gives its extra
  // ones to the least loaded nodes overall first, so the totals differ by
  // one at most too.
  std::vector<std::size_t> order(nodes.size());
  for (const auto& [kind, members] : kinds) {
    auto& mine = kind_load[kind];
    const std::size_t floor_share = members.size() / nodes.size();
    for (const std::size_t cap : {floor_share, floor_share + 1}) {
      for (const auto& r : members) {
        if (plan.count(r)) continue;
        const std::uint64_t rh = fnv1a64(r);
        for (std::size_t k = 0; k < nodes.size(); ++k) order[k] = k;
        auto rank = [&](std::size_t k) { return mix64(fnv1a64(nodes[k].name, rh)); };
        const bool extra = cap > floor_share;
        std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
          if (extra && load[a] != load[b]) return load[a] < load[b];
          const auto ra = rank(a), rb = rank(b);
          return ra != rb ? ra > rb : nodes[a].id < nodes[b].id;
        });
        for (const std::size_t k : order)
          if (mine[k] < cap) {
            plan[r] = nodes[k].id;
            ++load[k];
            ++mine[k];
            break;
          }
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
