#include "mm/storage/pg_leases.hpp"

#include <pqxx/pqxx>

#include "mm/engine/error.hpp"
#include "mm/storage/name_list.hpp"

namespace mm {

namespace {

constexpr const char* listen_channel = "mm_cluster";

std::int64_t ms(std::chrono::milliseconds d) {
  return static_cast<std::int64_t>(d.count());
}

}  // namespace

// Listens (LISTEN) for as long as it lives, and marks what came.
class pg_lease_table::wake_flag final : public pqxx::notification_receiver {
 public:
  explicit wake_flag(pqxx::connection_base& c) : pqxx::notification_receiver(c, listen_channel) {}
  void operator()(const std::string&, int) override { woken = true; }
  bool woken = false;
};

std::string with_connection_options(const std::string& url,
                                    const std::vector<std::pair<std::string, std::string>>& opts) {
  const bool is_url = url.rfind("postgresql://", 0) == 0 || url.rfind("postgres://", 0) == 0;
  std::string out = url;
  for (const auto& [key, value] : opts) {
    if (is_url)
      out += (out.find('?') == std::string::npos ? "?" : "&") + key + "=" + value;
    else
      out += " " + key + "=" + value;
  }
  return out;
}

template <class F>
auto pg_lease_table::guarded(const char* what, F&& f) -> decltype(f()) {
  return pg_guarded(db_, what, std::forward<F>(f));
}

pg_lease_table::pg_lease_table(const std::string& url, std::chrono::milliseconds io_timeout)
    : db_(with_connection_options(url, {{"connect_timeout", std::to_string(std::max<std::int64_t>(
                                                                1, (ms(io_timeout) + 999) / 1000))},
                                        {"tcp_user_timeout", std::to_string(ms(io_timeout))},
                                        {"keepalives", "1"},
                                        {"keepalives_idle", "1"},
                                        {"keepalives_interval", "1"},
                                        {"keepalives_count", "3"}})) {
  guarded("set the lease connection's time limit", [&] {
    // set_variable, not a SET statement: libpqxx restores these when it
    // reconnects a broken connection (the database ends one on the limit
    // below), and would silently drop a plain SET.
    db_.sql().set_variable("statement_timeout", std::to_string(ms(io_timeout)));
    // An agent paused inside a take (it locks its own row and the lease's)
    // must not hold the others' takes back: the database ends its idle
    // transaction as it ends a fenced writer's.
    db_.sql().set_variable("idle_in_transaction_session_timeout", std::to_string(ms(io_timeout)));
  });
  wake_ = guarded("listen for the cluster's changes",
                  [&] { return std::make_unique<wake_flag>(db_.sql()); });
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
    pqxx::work tx(db_.sql());
    const auto n = tx.exec1("SELECT nextval('cluster_node_incarnations')")[0].as<std::int64_t>();
    const std::string id = me.name + "#" + std::to_string(n);
    tx.exec_params0(
        "INSERT INTO cluster_nodes (node_id, name, http_url, actor_endpoint, pinned, expires_at) "
        "VALUES ($1, $2, $3, $4, $5, clock_timestamp() + $6 * interval '1 millisecond')",
        id, me.name, me.http_url, me.actor_endpoint, join_names(me.pinned), ms(lease));
    tx.exec_params(
        std::string("SELECT pg_try_advisory_lock($2::int, ") + node_lock_number + "::int)", id,
        node_lock_class);
    tx.exec0(
        "DELETE FROM cluster_nodes WHERE NOT alive AND left_at < clock_timestamp() - "
        "interval '1 hour' AND node_id NOT IN (SELECT owner FROM cluster_leases "
        "WHERE owner IS NOT NULL)");
    tx.commit();
    return id;
  });
}

bool pg_lease_table::renew(const std::string& node, std::chrono::milliseconds lease) {
  return guarded("renew the node's lease", [&] {
    pqxx::work tx(db_.sql());
    const auto r = tx.exec_params0(
        "UPDATE cluster_nodes SET expires_at = clock_timestamp() + $2 * interval '1 millisecond' "
        "WHERE node_id = $1 AND alive AND expires_at > clock_timestamp()",
        node, ms(lease));
    // Again after a reconnect (libpqxx may reconnect silently); held already: nothing.
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
    pqxx::work tx(db_.sql());
    tx.exec_params0(
        "UPDATE cluster_leases SET owner = NULL, since = clock_timestamp() "
        "WHERE owner = $1",
        node);
    tx.exec_params0(
        "UPDATE cluster_nodes SET alive = false, left_at = clock_timestamp() WHERE node_id = $1",
        node);
    tx.exec(std::string("NOTIFY ") + listen_channel);
    tx.commit();
  });
}

void pg_lease_table::add_resources(const std::vector<std::string>& resources) {
  guarded("add the cluster's resources", [&] {
    pqxx::work tx(db_.sql());
    for (const auto& r : resources)
      tx.exec_params0(
          "INSERT INTO cluster_leases (resource) VALUES ($1) ON CONFLICT (resource) DO NOTHING", r);
    tx.commit();
  });
}

cluster_view pg_lease_table::view() {
  return guarded("read the cluster's leases", [&] {
    cluster_view v;
    // One snapshot for both tables.
    pqxx::transaction<pqxx::repeatable_read> tx(db_.sql());
    v.now_unix_ms = tx.exec1("SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint")[0]
                        .as<std::int64_t>();
    for (const auto& r :
         tx.exec("SELECT node_id, name, http_url, actor_endpoint, pinned, alive, "
                 "alive AND expires_at > clock_timestamp(), "
                 "(extract(epoch FROM expires_at - clock_timestamp()) * 1000)::bigint, "
                 "(extract(epoch FROM started_at) * 1000)::bigint, EXISTS (SELECT 1 FROM "
                 "pg_locks l WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2 "
                 "AND l.classid::bigint = " +
                 std::to_string(node_lock_class) +
                 " AND l.objid::bigint = substring(node_id from '#([0-9]+)$')::bigint % "
                 "2147483648) FROM cluster_nodes ORDER BY node_id")) {
      cluster_node_row n;
      n.id = r[0].as<std::string>();
      n.info = {r[1].as<std::string>(), r[2].as<std::string>(), r[3].as<std::string>(),
                split_names(r[4].as<std::string>())};
      n.alive = r[5].as<bool>();
      n.live = r[6].as<bool>();
      n.expires_in_ms = r[7].as<std::int64_t>();
      n.started_unix_ms = r[8].as<std::int64_t>();
      n.connected = r[9].as<bool>();
      v.nodes.push_back(std::move(n));
    }
    for (const auto& r :
         tx.exec("SELECT resource, COALESCE(owner, ''), epoch, "
                 "COALESCE((extract(epoch FROM since) * 1000)::bigint, 0), takeovers "
                 "FROM cluster_leases ORDER BY resource")) {
      v.leases.push_back({r[0].as<std::string>(), r[1].as<std::string>(), r[2].as<std::uint64_t>(),
                          r[3].as<std::int64_t>(), r[4].as<std::uint64_t>()});
    }
    tx.commit();
    return v;
  });
}

lease_take pg_lease_table::take(const std::string& resource, const std::string& node) {
  return guarded("take a lease", [&] {
    lease_take out;
    pqxx::work tx(db_.sql());
    // The taker must be alive itself; its row stays locked to the commit, so
    // it is not declared dead in between.
    if (tx.exec_params("SELECT 1 FROM cluster_nodes WHERE node_id = $1 AND alive AND "
                       "expires_at > clock_timestamp() FOR SHARE",
                       node)
            .empty())
      return out;
    tx.exec0(
        "UPDATE cluster_nodes SET alive = false, left_at = clock_timestamp() "
        "WHERE alive AND expires_at <= clock_timestamp()");
    const auto lease = tx.exec_params(
        "SELECT COALESCE(owner, ''), epoch FROM cluster_leases WHERE resource = $1 FOR UPDATE",
        resource);
    if (lease.empty()) return out;
    const std::string owner = lease[0][0].as<std::string>();
    if (owner == node) return out;  // already its own: no new epoch
    if (!owner.empty() &&
        !tx.exec_params("SELECT 1 FROM cluster_nodes WHERE node_id = $1 AND alive FOR SHARE", owner)
             .empty())
      return out;  // a live owner keeps it
    const auto r = tx.exec_params1(
        "UPDATE cluster_leases SET owner = $2, epoch = epoch + 1, since = clock_timestamp(), "
        "takeovers = takeovers + $3 WHERE resource = $1 RETURNING epoch",
        resource, node, owner.empty() ? 0 : 1);
    tx.exec(std::string("NOTIFY ") + listen_channel);  // the others see the new owner at once
    tx.commit();
    out.taken = true;
    out.epoch = r[0].as<std::uint64_t>();
    out.previous_owner = owner;
    return out;
  });
}

bool pg_lease_table::release(const std::string& resource, const std::string& node,
                             std::uint64_t epoch) {
  return guarded("release a lease", [&] {
    pqxx::work tx(db_.sql());
    const auto r = tx.exec_params0(
        "UPDATE cluster_leases SET owner = NULL, since = clock_timestamp() "
        "WHERE resource = $1 AND owner = $2 AND epoch = $3",
        resource, node, static_cast<std::int64_t>(epoch));
    tx.exec(std::string("NOTIFY ") + listen_channel);
    tx.commit();
    return r.affected_rows() == 1;
  });
}

void pg_lease_table::notify() {
  guarded("wake the cluster", [&] {
    pqxx::nontransaction tx(db_.sql());
    tx.exec(std::string("NOTIFY ") + listen_channel);
  });
}

bool pg_lease_table::wait_for_notification(std::chrono::milliseconds timeout) {
  return guarded("wait for the cluster", [&] {
    wake_->woken = false;
    if (db_.sql().get_notifs() == 0) {  // none queued yet: wait for one
      const auto t = std::max<std::int64_t>(0, ms(timeout));
      db_.sql().await_notification(static_cast<long>(t / 1000),
                                   static_cast<long>((t % 1000) * 1000));
    }
    return wake_->woken;
  });
}

}  // namespace mm
