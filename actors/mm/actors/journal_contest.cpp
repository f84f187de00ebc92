#include "mm/actors/journal_contest.hpp"

namespace mm::actors {

std::string contested_tickets::services_of(const std::vector<std::string>& queues) const {
  if (me_.count <= 1 || queues.empty()) return {};
  const std::uint32_t home =
      session::queue_partition(session::partitioned_name(queues.front()), me_.count);
  auto guests = session::guest_services(queues, stream_, {home, me_.count});
  if (guests.empty()) return {};
  std::string out = session::partition_service(stream_, home, me_.count);
  for (const auto& g : guests) out += "," + g;
  return out;
}

std::vector<std::string> contested_tickets::guests_of(
    const std::vector<std::string>& queues) const {
  return session::guest_services(queues, stream_, me_);
}

}  // namespace mm::actors
