#include "mm/storage/pg_leases.hpp"

#include <algorithm>

#include "mm/engine/error.hpp"
#include "mm/storage/name_list.hpp"
#include "mm/storage/player_store.hpp"

namespace mm {

namespace {

constexpr const char* listen_channel = "mm_cluster";

std::int64_t ms(std::chrono::milliseconds d) {
  return static_cast<std::int64_t>(d.count());
}

}  // namespace

template <class F>
auto pg_lease_table::guarded(const char* what, F&& f) -> decltype(f()) {
  return pg_guarded_at(where_, what, std::forward<F>(f));
}

pg_lease_table::pg_lease_table(const std::string& url, std::chrono::milliseconds io_timeout)
    : where_(redacted_url(url)),
      sql_(pg::with_client_limits(url, io_timeout), io_timeout, pg::server_limits(io_timeout)) {
  // The schema, migrated once through a connection of the stores' kind, let go.
  pg_database migrated(url, io_timeout);
  guarded("listen for the cluster's changes", [&] { sql_.listen(listen_channel); });
}

pg_lease_table::~pg_lease_table() = default;

namespace {

// The advisory lock of a node's incarnation ("name#17"): a class of the
// project's own and the incarnation number (unique: a sequence).
constexpr std::int64_t node_lock_class = 0x6d6d6e64;  // "mmnd"
constexpr const char* node_lock_number = "(substring($1 from '#([0-9]+)$')::bigint % 2147483648)";

}  // namespace

std::string pg_lease_table::join(const cluster_node_info& me, std::chrono::milliseconds lease) {
  return guarded("join the cluster", [&] {
    pg::transaction tx(sql_);
    const auto n = tx.exec("SELECT nextval('cluster_node_incarnations')").int64(0, 0);
    const std::string id = me.name + "#" + std::to_string(n);
    tx.exec_params(
        "INSERT INTO cluster_nodes (node_id, name, http_url, actor_endpoint, pinned, expires_at) "
        "VALUES ($1, $2, $3, $4, $5, clock_timestamp() + $6 * interval '1 millisecond')",
        id, me.name, me.http_url, me.actor_endpoint, join_names(me.pinned), ms(lease));
    tx.exec_params(
        std::string("SELECT pg_try_advisory_lock($2::int, ") + node_lock_number + "::int)", id,
        node_lock_class);
    tx.exec(
        "DELETE FROM cluster_nodes WHERE NOT alive AND left_at < clock_timestamp() - "
        "interval '1 hour' AND node_id NOT IN (SELECT owner FROM cluster_leases "
        "WHERE owner IS NOT NULL)");
    tx.commit();
    return id;
  });
}

bool pg_lease_table::renew(const std::string& node, std::chrono::milliseconds lease) {
  return guarded("renew the node's lease", [&] {
    pg::transaction tx(sql_);
    const auto r = tx.exec_params(
        "UPDATE cluster_nodes SET expires_at = clock_timestamp() + $2 * interval '1 millisecond' "
        "WHERE node_id = $1 AND alive AND expires_at > clock_timestamp()",
        node, ms(lease));
    // Again after a reconnect (a failed call closes the connection, the next
    // makes a new one); held already: nothing.
    tx.exec_params(std::string("SELECT pg_try_advisory_lock($2::int, ") + node_lock_number +
                       "::int) WHERE NOT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = "
                       "'advisory' AND pid = pg_backend_pid() AND classid::bigint = $2 AND "
                       "objid::bigint = " +
                       node_lock_number + ")",
                   node, node_lock_class);
    tx.commit();
    return r.affected_rows() == 1;
  });
}

void pg_lease_table::leave(const std::string& node) {
  guarded("leave the cluster", [&] {
    pg::transaction tx(sql_);
    tx.exec_params(
        "UPDATE cluster_leases SET owner = NULL, since = clock_timestamp() "
        "WHERE owner = $1",
        node);
    tx.exec_params(
        "UPDATE cluster_nodes SET alive = false, left_at = clock_timestamp() WHERE node_id = $1",
        node);
    tx.exec(std::string("NOTIFY ") + listen_channel);
    tx.commit();
  });
}

void pg_lease_table::add_resources(const std::vector<std::string>& resources) {
  guarded("add the cluster's resources", [&] {
    pg::transaction tx(sql_);
    for (const auto& r : resources)
      tx.exec_params(
          "INSERT INTO cluster_leases (resource) VALUES ($1) ON CONFLICT (resource) DO NOTHING", r);
    tx.commit();
  });
}

cluster_view pg_lease_table::view() {
  return guarded("read the cluster's leases", [&] {
    cluster_view v;
    // One snapshot for both tables.
    pg::transaction tx(sql_, "BEGIN ISOLATION LEVEL REPEATABLE READ");
    v.now_unix_ms =
        tx.exec("SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint").int64(0, 0);
    const pg::result nodes = tx.exec(
        "SELECT node_id, name, http_url, actor_endpoint, pinned, alive, "
        "alive AND expires_at > clock_timestamp(), "
        "(extract(epoch FROM expires_at - clock_timestamp()) * 1000)::bigint, "
        "(extract(epoch FROM started_at) * 1000)::bigint, EXISTS (SELECT 1 FROM "
        "pg_locks l WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2 "
        "AND l.classid::bigint = " +
        std::to_string(node_lock_class) +
        " AND l.objid::bigint = substring(node_id from '#([0-9]+)$')::bigint % "
        "2147483648) FROM cluster_nodes ORDER BY node_id");
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      cluster_node_row n;
      n.id = nodes.text(i, 0);
      n.info = {nodes.text(i, 1), nodes.text(i, 2), nodes.text(i, 3),
                split_names(nodes.text(i, 4))};
      n.alive = nodes.boolean(i, 5);
      n.live = nodes.boolean(i, 6);
      n.expires_in_ms = nodes.int64(i, 7);
      n.started_unix_ms = nodes.int64(i, 8);
      n.connected = nodes.boolean(i, 9);
      v.nodes.push_back(std::move(n));
    }
    const pg::result leases = tx.exec(
        "SELECT resource, COALESCE(owner, ''), epoch, "
        "COALESCE((extract(epoch FROM since) * 1000)::bigint, 0), takeovers "
        "FROM cluster_leases ORDER BY resource");
    for (std::size_t i = 0; i < leases.size(); ++i)
      v.leases.push_back({leases.text(i, 0), leases.text(i, 1),
                          static_cast<std::uint64_t>(leases.int64(i, 2)), leases.int64(i, 3),
                          static_cast<std::uint64_t>(leases.int64(i, 4))});
    tx.commit();
    return v;
  });
}

lease_take pg_lease_table::take(const std::string& resource, const std::string& node) {
  return guarded("take a lease", [&] {
    lease_take out;
    pg::transaction tx(sql_);
    // The taker must be alive itself; its row stays locked to the commit, so
    // it is not declared dead in between.
    if (tx.exec_params("SELECT 1 FROM cluster_nodes WHERE node_id = $1 AND alive AND "
                       "expires_at > clock_timestamp() FOR SHARE",
                       node)
            .empty())
      return out;
    tx.exec(
        "UPDATE cluster_nodes SET alive = false, left_at = clock_timestamp() "
        "WHERE alive AND expires_at <= clock_timestamp()");
    const auto lease = tx.exec_params(
        "SELECT COALESCE(owner, ''), epoch FROM cluster_leases WHERE resource = $1 FOR UPDATE",
        resource);
    if (lease.empty()) return out;
    const std::string owner = lease.text(0, 0);
    if (owner == node) return out;  // already its own: no new epoch
    if (!owner.empty() &&
        !tx.exec_params("SELECT 1 FROM cluster_nodes WHERE node_id = $1 AND alive FOR SHARE", owner)
             .empty())
      return out;  // a live owner keeps it
    const auto r = tx.exec_params(
        "UPDATE cluster_leases SET owner = $2, epoch = epoch + 1, since = clock_timestamp(), "
        "takeovers = takeovers + $3 WHERE resource = $1 RETURNING epoch",
        resource, node, owner.empty() ? 0 : 1);
    tx.exec(std::string("NOTIFY ") + listen_channel);  // the others see the new owner at once
    tx.commit();
    out.taken = true;
    out.epoch = static_cast<std::uint64_t>(r.int64(0, 0));
    out.previous_owner = owner;
    return out;
  });
}

bool pg_lease_table::release(const std::string& resource, const std::string& node,
                             std::uint64_t epoch) {
  return guarded("release a lease", [&] {
    pg::transaction tx(sql_);
    const auto r = tx.exec_params(
        "UPDATE cluster_leases SET owner = NULL, since = clock_timestamp() "
        "WHERE resource = $1 AND owner = $2 AND epoch = $3",
        resource, node, static_cast<std::int64_t>(epoch));
    tx.exec(std::string("NOTIFY ") + listen_channel);
    tx.commit();
    return r.affected_rows() == 1;
  });
}

void pg_lease_table::notify() {
  guarded("wake the cluster", [&] { sql_.exec(std::string("NOTIFY ") + listen_channel); });
}

bool pg_lease_table::wait_for_notification(std::chrono::milliseconds timeout) {
  return guarded("wait for the cluster",
                 [&] { return sql_.wait_for_notification(std::max(timeout, timeout.zero())); });
}

}  // namespace mm
