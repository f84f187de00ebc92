// A node's lease agent (docs/design.md, "Leases"; docs/operations.md,
// "Several nodes"): on a thread of its own, with a database connection of its
// own, it keeps the node's heartbeat, takes and frees the node's leases
// according to the plan every node computes (ownership.hpp), and tells the
// node what to start and stop serving through its hooks.
//
// One round (step): renew the heartbeat; read the cluster; stop and free what
// the plan gives to another live node; take what the plan gives to this node
// (or what has been free too long); start what was taken. Rounds run every
// `check_every`, and at once when another node frees a lease or joins
// (LISTEN/NOTIFY).
//
// While run() runs, a watchdog thread with a connection of its own renews
// the heartbeat whenever a hook (a start or a stop) has run for an interval
// since the last renewal: a start that reads a large snapshot or journal
// back, or a stop that writes one, may take longer than the lease without
// the node losing what it holds. (With the renewals between hooks only, one
// such start made the node drop everything, again at each takeover.) The
// rounds renew as before; the watchdog adds no connection attempts while
// the node is past its deadline (a database down or cut off). A renewal the
// database refuses ends the incarnation: the next round joins anew.
//
// Times, from cluster.takeover_after T (default 10 s): the heartbeat lease is
// 0.6 T and rounds run every 0.15 T, so a dead node's resources are taken
// within 0.6 T + 0.15 T of its last renewal, and served once they have
// started (a shard reads its snapshot): within T.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "mm/cluster/serving_deadline.hpp"
#include "mm/storage/pg_leases.hpp"

namespace mm::cluster {

struct agent_config {
  std::string database_url;
  cluster_node_info me;
  std::vector<std::string> resources;  // every resource of the cluster, in any order
  std::chrono::milliseconds takeover_after{10'000};

  std::chrono::milliseconds lease() const { return takeover_after * 6 / 10; }
  std::chrono::milliseconds check_every() const { return takeover_after * 15 / 100; }
};

// What the node does when it gains or loses a resource; called on the
// agent's thread, one at a time.
struct ownership_hooks {
  // Serve `resource` from now, writing under `node` and `epoch` (its fence);
  // false when it could not start (the lease is then freed again).
  std::function<bool(const std::string& resource, const std::string& node, std::uint64_t epoch)>
      start;
  // Stop serving `resource`. Handing over (the lease still this node's):
  // returns once stopped and its last state written, for the next owner.
  // Lost (taken away): stops it at once and waits for nothing (its writes
  // would be refused by the fence anyway).
  std::function<void(const std::string& resource, bool handing_over)> stop;
};

struct agent_counters {
  std::uint64_t rounds = 0;
  std::uint64_t takes = 0;            // every take, first starts included
  std::uint64_t takeovers = 0;        // takes from a node that had died
  double takeover_seconds_total = 0;  // from the dead node's expiry to this start
  double last_takeover_seconds = 0;
  std::uint64_t releases = 0;        // handed over to another node
  std::uint64_t lost = 0;            // resources lost without handing them over
  std::uint64_t renew_failures = 0;  // heartbeats refused or not answered
  std::uint64_t joins = 0;           // incarnations (1 + rejoins after losing all)
  std::uint64_t database_errors = 0;
};

struct owned_resource {
  std::string resource;
  std::uint64_t epoch = 0;
};

// What /api/cluster shows: the last view read and this node's side.
struct agent_report {
  std::string node_id;
  cluster_view view;
  std::int64_t view_age_ms = 0;     // since the view was read (this process's clock)
  std::int64_t renew_every_ms = 0;  // check_every: how often a live node renews
  std::int64_t lease_ms = 0;        // a renewal's length
  std::vector<owned_resource> owned;
  std::map<std::string, std::string> plan;
  agent_counters counters;
  bool serving = false;
  std::int64_t serving_for_ms = 0;  // until the deadline, from now
};

// Whether the view shows `n` connected (its advisory lock held) and renewed
// within the renewal interval, in a view itself no older than that (a
// quarter more for a round's own time). A killed node fails it at the next
// view read; one that stopped renewing (paused, cut off) within two
// intervals of its last renewal, well before its row expires. Nobody is
// sent to such a node (HTTP answers 503 until a live owner serves).
bool seen_renewing(const agent_report& r, const cluster_node_row& n);

class lease_agent {
 public:
  // Connects and joins the cluster (a new incarnation), trying again for
  // `takeover_after` (three attempts at least). Throws store_error when the
  // database cannot be reached by then.
  lease_agent(agent_config config, ownership_hooks hooks,
              std::shared_ptr<serving_deadline> deadline);
  ~lease_agent();

  // Rounds until `stop` is set, with the heartbeat on a thread of its own;
  // then a graceful leave: every resource stopped (its last state written),
  // every lease freed at once.
  void run(const std::atomic<bool>& stop);
  // One round, the heartbeat's renewal included (tests drive it by hand: a
  // node the test stops stepping is a node whose heartbeat stopped).
  void step();
  // Stops everything and frees every lease now.
  void leave();

  agent_report report() const;
  std::string node_id() const;
  // Whether this node holds `resource`'s lease now (and runs it).
  bool holds(const std::string& resource) const;

 private:
  void join();
  // The round's renewal: a refused one ends the incarnation (joins anew).
  void renew();
  // Renews `id` on `table` and moves the deadline; false when the database
  // refused (the incarnation is over: refused_). Throws on a database error.
  bool renew_on(pg_lease_table& table, const std::string& id);
  // The watchdog's thread (run) until stop_watchdog().
  void watch_hooks();
  void stop_watchdog();
  // The hooks, marked as running for the watchdog.
  class hook_running;
  bool start_hook(const std::string& resource, std::uint64_t epoch);
  void stop_hook(const std::string& resource, bool handing_over);
  // Renews when a round's starts and stops have run past `check_every` since
  // the last renewal (a node taking several shards must not let its own
  // heartbeat lapse); false when the node lost its incarnation meanwhile
  // (the watchdog's renewal was refused, or this one).
  bool keep_alive();
  void lose_everything(const std::string& why);
  // Connects if need be, joins or renews, balances; false on a database
  // error (counted and logged; the connection is dropped).
  bool try_round();
  // Whether an attempt begun at `began` failed sooner than a tenth of the
  // lease: a cut connection, not a database that does not answer.
  bool failed_fast(std::chrono::steady_clock::time_point began) const;
  void balance(const cluster_view& view);
  void connect();

  agent_config config_;
  ownership_hooks hooks_;
  std::shared_ptr<serving_deadline> deadline_;
  std::unique_ptr<pg_lease_table> table_;       // null after a database error, until reconnected
  mutable std::mutex mutex_;                    // guards what report() reads
  std::string node_id_;                         // empty: not joined
  std::map<std::string, std::uint64_t> owned_;  // resource -> epoch
  std::map<std::string, std::string> plan_;
  std::map<std::string, std::chrono::steady_clock::time_point> free_since_;
  // Resources whose start failed here, and when: not taken again here for
  // a round. (Taken at once, each failure's release woke every agent and
  // the same node took it again: a loop of takes, epochs by the hundred,
  // while an old instance of it was still stopping.)
  std::map<std::string, std::chrono::steady_clock::time_point> start_failed_;
  std::chrono::steady_clock::time_point joined_at_{};  // this incarnation's join (sent)
  // Guarded by mutex_ (the watchdog reads and writes them too):
  // When the last renewal (or join) that succeeded was sent.
  std::chrono::steady_clock::time_point last_renewal_sent_{};
  bool in_hook_ = false;        // a start or stop runs now
  bool watchdog_stop_ = false;  // run() is over
  std::string refused_;         // the incarnation whose renewal was refused
  std::thread watchdog_;        // while run() runs
  std::condition_variable watchdog_wake_;
  cluster_view last_view_;
  std::chrono::steady_clock::time_point last_view_at_{};
  agent_counters counters_;
};

}  // namespace mm::cluster
