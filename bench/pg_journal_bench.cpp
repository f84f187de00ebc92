// The session journal's fenced write on PostgreSQL: the store's way (every
// statement of a commit in one pipeline, one round trip) against the same
// statements sent one round trip each in a transaction (the way before), in
// the same run, on a server the bench starts, through a fenced lease as a
// node of a cluster writes them. Each commit carries `batch` new tickets,
// as many outcomes of earlier ones, and one event per row. Then the guard
// of the session queues in partitions (every outcome conditional on its
// ticket's row still waiting: one more statement in the pipeline, locking
// those rows) against the same pipeline without it.
// Usage: mm_pg_journal_bench [seconds=2]. JSON lines.
#include <chrono>
#include <stdexcept>
#include <utility>
#include <vector>

#include "bench_util.hpp"
#include "mm/storage/pg_leases.hpp"
#include "mm/storage/pg_store.hpp"
#include "mm/testing/postgres_server.hpp"

using mm::bench::emit;
using mm::bench::now_s;

namespace {

constexpr const char* bench = "pg_journal";
constexpr const char* service = "bench";

struct batches {
  std::uint64_t next_id = 1, next_seq = 1;
  std::uint64_t first_id = 1;  // outcomes finish tickets of this range only

  mm::journal_batch make(std::size_t n) {
    mm::journal_batch b;
    const std::int64_t now = mm::unix_ms_now();
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint64_t id = next_id++;
      b.created.push_back({id, "duel", "game-a", now, std::string(96, 't')});
      b.events.push_back({next_seq++, id, "", "duel", now, std::string(64, 'e')});
      if (i < n / 2 + 1 && id >= first_id + n)
        b.finished.push_back({id - n, "", 1, now, std::string(128, 'o')});
    }
    return b;
  }
};

// The same statements, one round trip each, in a transaction with the
// fence's check first: what the store did before its pipeline.
void one_by_one(mm::pg::connection& c, const mm::write_fence& f, const mm::journal_batch& b) {
  mm::pg::transaction tx(c);
  if (tx.exec_params("SELECT 1 FROM cluster_leases l JOIN cluster_nodes n ON n.node_id = l.owner "
                     "WHERE l.resource = $1 AND l.owner = $2 AND l.epoch = $3 AND n.alive FOR "
                     "SHARE OF l",
                     f.resource, f.node, static_cast<std::int64_t>(f.epoch))
          .empty())
    throw std::runtime_error("fenced");
  for (const auto& t : b.created)
    tx.exec_params(
        "INSERT INTO session_ticket_journal (ticket_id, service, queues, credential, "
        "created_at, ticket, state) VALUES ($1, $2, $3, $4, $5, $6, 0) "
        "ON CONFLICT (ticket_id) DO NOTHING",
        static_cast<std::int64_t>(t.id), std::string(service) + "-ref", t.queues, t.credential,
        t.created_unix_ms, mm::pg::param::bytes(t.ticket));
  for (const auto& o : b.finished)
    tx.exec_params(
        "UPDATE session_ticket_journal SET state = $1, finished_at = $2, outcome = $3 "
        "WHERE ticket_id = $4 AND state = 0",
        static_cast<int>(o.state), o.finished_unix_ms, mm::pg::param::bytes(o.outcome),
        static_cast<std::int64_t>(o.id));
  for (const auto& e : b.events)
    tx.exec_params(
        "INSERT INTO session_ticket_events (service, seq, ticket_id, credential, queue, at, "
        "event) VALUES ($1, $2, $3, $4, $5, $6, $7)",
        std::string(service) + "-ref", static_cast<std::int64_t>(e.seq),
        static_cast<std::int64_t>(e.ticket), e.credential, e.queue, e.at_unix_ms,
        mm::pg::param::bytes(e.event));
  tx.commit();
}

// Calls per second of `a` and of `b`, alternated in six rounds so that both
// see the same machine.
template <class A, class B>
std::pair<double, double> alternated(double seconds, A a, B b) {
  double t_a = 0, t_b = 0;
  std::uint64_t n_a = 0, n_b = 0;
  for (int round = 0; round < 6; ++round) {
    double start = now_s();
    for (; now_s() - start < seconds / 6; ++n_a) a();
    t_a += now_s() - start;
    start = now_s();
    for (; now_s() - start < seconds / 6; ++n_b) b();
    t_b += now_s() - start;
  }
  return {static_cast<double>(n_a) / t_a, static_cast<double>(n_b) / t_b};
}

}  // namespace

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::stod(argv[1]) : 2.0;
  if (mm::test::postgres_server::binaries().empty()) {
    std::printf("mm_pg_journal_bench: skipped, PostgreSQL's server is not installed\n");
    return 0;
  }
  mm::test::postgres_server pg;
  mm::pg_lease_table leases(pg.url(), std::chrono::seconds(5));
  const std::string node = leases.join({"bench", "http://bench", "", {}}, std::chrono::hours(1));
  leases.add_resources({"sessions"});
  const auto take = leases.take("sessions", node);
  const mm::write_fence fence{"sessions", node, take.epoch, std::chrono::seconds(5)};
  mm::pg_store store(pg.url());
  store.set_write_fence(fence);
  mm::pg::connection reference(pg.url(), std::chrono::seconds(30));
  batches pipelined, sent_one_by_one;
  sent_one_by_one.first_id = sent_one_by_one.next_id =
      1'000'000'000;  // apart from the pipelined rows
  for (const std::size_t batch : {1, 8, 64}) {
    const std::string extra = "\"batch\": " + std::to_string(batch) + ", \"fenced\": true";
    const auto [pipe_rate, ref_rate] = alternated(
        seconds, [&] { store.write_journal(service, pipelined.make(batch)); },
        [&] { one_by_one(reference, fence, sent_one_by_one.make(batch)); });
    emit(bench, "pipelined_commits_per_s", pipe_rate, "commits/s", extra);
    emit(bench, "one_by_one_commits_per_s", ref_rate, "commits/s", extra);
    emit(bench, "pipelined_vs_one_by_one", pipe_rate / ref_rate, "ratio", extra);
    emit(bench, "pipelined_tickets_per_s", pipe_rate * static_cast<double>(batch), "tickets/s",
         extra);
  }
  // The guard: each outcome a group of its own, as a partition's cancel or
  // expiry is; every row still waits, so nothing is left out.
  std::uint64_t range = 2'000'000'000;  // apart from the rows above
  for (const std::size_t batch : {1, 8, 64}) {
    // Fresh ticket ranges for each size: every outcome finishes a ticket
    // that still waits.
    batches plain, guarded;
    plain.first_id = plain.next_id = plain.next_seq = range += 100'000'000;
    guarded.first_id = guarded.next_id = guarded.next_seq = range += 100'000'000;
    const std::string extra = "\"batch\": " + std::to_string(batch) + ", \"fenced\": true";
    const auto [plain_rate, guarded_rate] = alternated(
        seconds, [&] { store.write_journal(service, plain.make(batch)); },
        [&] {
          mm::journal_batch b = guarded.make(batch);
          std::uint32_t group = 0;
          for (auto& o : b.finished) {
            o.contested = true;
            o.group = ++group;
          }
          std::vector<std::uint32_t> lost;
          store.write_journal(service, b, &lost);
          if (!lost.empty()) throw std::runtime_error("a guarded outcome was left out");
        });
    emit(bench, "unguarded_commits_per_s", plain_rate, "commits/s", extra);
    emit(bench, "guarded_commits_per_s", guarded_rate, "commits/s", extra);
    emit(bench, "guarded_vs_unguarded", guarded_rate / plain_rate, "ratio", extra);
  }
  return 0;
}
