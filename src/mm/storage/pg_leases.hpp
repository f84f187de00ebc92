// The cluster's nodes and leases on PostgreSQL (schema/postgresql/
// 005_cluster_leases.sql; docs/design.md, "Leases"). One connection, used by
// one thread: a node's lease agent (mm/cluster/lease_agent.hpp).
//
// The rules, each kept by one statement or one transaction, with the
// database's clock as the only clock:
// - a node joins as a new incarnation ("name#17") whose row expires
//   `lease` after the database's now; it renews the row before then;
// - a renewal succeeds only while the row is alive and not expired: a node
//   whose row expired (paused, cut off) never extends it again, it joins anew;
// - a take declares every expired node dead (alive = false, for ever), then
//   takes the resource if it is free, or its owner is dead, and the taker
//   itself alive. A take adds one to the lease's epoch;
// - the renewal and the declaration of death update the same row, so the
//   database orders them: a node is either renewed before anyone sees it
//   expired, or dead before it renews, never both;
// - a write fenced by a lease (pg_store::check_fence) locks the lease row
//   to its commit, so a take waits for it and then reads it;
// - a node's agent connection holds a session advisory lock named by its
//   incarnation, taken at the join and again at a renewal when a reconnect
//   lost it: the database drops it the moment the process dies, so the
//   view tells a killed node (`connected` false) long before its row
//   expires. Only where to send clients reads it; leases wait for expiry.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mm/storage/pg_connection.hpp"
#include "mm/storage/pg_database.hpp"

namespace mm {

struct cluster_node_info {
  std::string name;                 // unique among the live nodes (cluster.node)
  std::string http_url;             // where its HTTP API answers ("http://10.0.0.5:8080")
  std::string actor_endpoint;       // its actor port ("10.0.0.5:4242"), or empty
  std::vector<std::string> pinned;  // resources only this node takes (cluster.owned)
};

struct cluster_node_row {
  std::string id;  // name#incarnation
  cluster_node_info info;
  bool alive = false;              // not left, not declared dead
  bool live = false;               // alive and not expired now
  bool connected = false;          // its agent's connection holds its advisory lock now
  std::int64_t expires_in_ms = 0;  // negative once expired
  std::int64_t started_unix_ms = 0;
};

struct cluster_lease_row {
  std::string resource;
  std::string owner;  // a node id; empty: free
  std::uint64_t epoch = 0;
  std::int64_t since_unix_ms = 0;
  std::uint64_t takeovers = 0;
};

struct cluster_view {
  std::vector<cluster_node_row> nodes;    // by id; the dead ones of the last hour too
  std::vector<cluster_lease_row> leases;  // by resource
  std::int64_t now_unix_ms = 0;           // the database's clock
};

// What a take found and did.
struct lease_take {
  bool taken = false;
  std::uint64_t epoch = 0;     // the new epoch, when taken
  std::string previous_owner;  // a dead node's id when taken over; empty when it was free
};

class pg_lease_table {
 public:
  // Its own connection, on which every call (connecting, a statement, a
  // transaction's each statement) gives up within `io_timeout` by its own
  // deadline, and whose server ends the session's leftovers within it too
  // (statement and idle-transaction timeouts, the server socket's TCP user
  // timeout): an agent cut off from the database must notice in time, and
  // no call of it waits for ever on a silent link. Migrates the schema.
  pg_lease_table(const std::string& url, std::chrono::milliseconds io_timeout);
  ~pg_lease_table();

  // A new incarnation of `me`; returns its node id. Drops the rows of nodes
  // dead for more than an hour.
  std::string join(const cluster_node_info& me, std::chrono::milliseconds lease);
  // True when the node's row was alive and unexpired, and now expires
  // `lease` from the database's now; false: the node owns nothing any more.
  bool renew(const std::string& node, std::chrono::milliseconds lease);
  // A graceful leave: every lease of the node freed, the node dead.
  void leave(const std::string& node);

  // Rows for these resources, free, when missing.
  void add_resources(const std::vector<std::string>& resources);
  cluster_view view();
  lease_take take(const std::string& resource, const std::string& node);
  // Frees the node's lease at `epoch`; false when it was not the node's.
  bool release(const std::string& resource, const std::string& node, std::uint64_t epoch);

  // Wakes every node's agent (a release, a join): LISTEN/NOTIFY.
  void notify();
  // Waits up to `timeout` for a notification; true when one came.
  bool wait_for_notification(std::chrono::milliseconds timeout);

  const std::string& where() const { return where_; }

 private:
  template <class F>
  auto guarded(const char* what, F&& f) -> decltype(f());

  std::string where_;
  pg::connection sql_;  // libpq itself: every call bounded (pg_connection.hpp)
};

}  // namespace mm
