// A new configuration for the running session queues, without a restart
// (docs/operations.md, "Changing the configuration while it runs"): the
// service is sent the whole set of queue configs, and each queue whose config
// changed takes its new one in place.
//
// A queue that changes reads its waiting tickets and running matches back
// from the journal (after every record it sent) and takes them into an engine
// of the new config, handling no other message meanwhile: no ticket is lost,
// none is seen twice, and each keeps its id and creation time, so its waiting
// time (and the rules that relax with it) go on from where they were. The
// next tick is the first under the new config. A ticket or running match that
// no longer fits fails or stops, written to the journal, as after a restart.
//
// A configured queue that the new set no longer holds is closed: tickets for
// it are refused, and those waiting in it stay until they are matched, expire
// or are cancelled. A queue made from the template or split into shards
// follows its template's or its base's config.
#pragma once

#include <caf/allowed_unsafe_message_type.hpp>
#include <optional>
#include <vector>

#include "mm/actors/interface.hpp"  // configure_atom
#include "mm/session/queue_config.hpp"

namespace mm::actors {

// Every queue's config, and the template of queues made on first use.
struct queue_set {
  std::vector<session::queue_config> queues;
  std::optional<session::queue_config> default_queue;
};

}  // namespace mm::actors

// Sent between the actors of one process only (never over the network).
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(mm::actors::queue_set)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(mm::session::queue_config)
