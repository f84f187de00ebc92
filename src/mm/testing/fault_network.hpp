// A network of the test's own for faults as they happen on a real link:
// PostgreSQL in a network namespace behind a router namespace, reached from
// the test's namespace (where the nodes and their clients run) at one
// address per path, so the router can cut, drop or slow one node's path to
// the database and leave the others and every client alone.
//
//   test's namespace          router namespace            database namespace
//   10.77.K.1 ── veth ── 10.77.K.2 | 10.77.K.5 ── veth ── 10.77.K.6
//                                                          + 10.77.K.16+p (path p)
//
// - cut(p): the router drops what goes to and comes from path p's address,
//   silently (a blackhole route and a blackhole rule: no reset, no ICMP),
//   as a switch that died or a firewall that lost its state would.
// - drop(share): a random share of every packet the router forwards
//   (iptables' statistic match; this kernel has neither netem nor a tc
//   classifier to drop with).
// - slow(kbit): the router's both links at that rate (tc's htb), so that
//   a statement waits behind what was sent before it.
// - heal(): all of it undone; connections that outlived the fault go on.
//
// Everything is made with Debian's iproute2 (ip, tc) and iptables, needs
// root, and is removed with the object. Tests that run side by side take
// different K: a name already taken is skipped.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <stdexcept>
#include <string>

namespace mm::test {

class fault_network {
 public:
  static constexpr int max_paths = 12;

  // True where namespaces can be made here (root, with iproute2).
  static bool available() {
    return geteuid() == 0 && std::system("command -v ip > /dev/null 2>&1") == 0 &&
           std::system("command -v iptables > /dev/null 2>&1") == 0;
  }

  fault_network() {
    for (int attempt = 0; attempt < 250; ++attempt) {
      k_ = static_cast<int>((static_cast<unsigned>(getpid()) + 37u * attempt) % 250u) + 1;
      // The router's namespace is the claim: `ip netns add` fails when taken.
      if (quiet("ip netns add " + router())) break;
      k_ = 0;
    }
    if (k_ == 0) throw std::runtime_error("no free fault network (10.77.K.0/24) was found");
    made_ = true;
    try {
      build();
    } catch (...) {
      remove();  // a half-built network is not left behind
      throw;
    }
  }

  ~fault_network() { remove(); }
  fault_network(const fault_network&) = delete;
  fault_network& operator=(const fault_network&) = delete;

  // The namespace to run the database in (`ip netns exec` it).
  std::string database() const { return "mfd" + std::to_string(k_); }
  std::string router() const { return "mfr" + std::to_string(k_); }
  // The database's address on path `p` (0 <= p < max_paths).
  std::string path_address(int p) const {
    return "10.77." + std::to_string(k_) + "." + std::to_string(16 + p);
  }

  // Silently drops everything to and from path `p`'s address.
  void cut(int p) {
    run("ip -n " + router() + " route add blackhole " + path_address(p) + "/32");
    run("ip -n " + router() + " rule add from " + path_address(p) + " blackhole");
  }
  void heal(int p) {
    quiet("ip -n " + router() + " route del blackhole " + path_address(p) + "/32");
    quiet("ip -n " + router() + " rule del from " + path_address(p) + " blackhole");
  }
  // Drops `share` (0..1) of the packets the router forwards, at random.
  void drop(double share) {
    run("ip netns exec " + router() + " iptables -A FORWARD -m statistic --mode random " +
        "--probability " + std::to_string(share) + " -j DROP");
  }
  // Both of the router's links at `kbit` kilobits a second.
  void slow(int kbit) {
    for (const char* side : {"b", "c"}) {
      const std::string dev = "mf" + std::to_string(k_) + side;
      run("ip netns exec " + router() + " tc qdisc add dev " + dev +
          " root handle 1: htb default 1");
      run("ip netns exec " + router() + " tc class add dev " + dev +
          " parent 1: classid 1:1 htb rate " + std::to_string(kbit) + "kbit");
    }
  }
  // Every fault undone.
  void heal() {
    for (int p = 0; p < max_paths; ++p) heal(p);
    quiet("ip netns exec " + router() + " iptables -F FORWARD");
    for (const char* side : {"b", "c"})
      quiet("ip netns exec " + router() + " tc qdisc del dev mf" + std::to_string(k_) + side +
            " root");
  }

 private:
  void build() {
    const std::string n = std::to_string(k_);
    const std::string net = "10.77." + n + ".";
    run("ip netns add " + database());
    run("ip link add mf" + n + "a type veth peer name mf" + n + "b");
    run("ip link set mf" + n + "b netns " + router());
    run("ip link add mf" + n + "c type veth peer name mf" + n + "d");
    run("ip link set mf" + n + "c netns " + router());
    run("ip link set mf" + n + "d netns " + database());
    run("ip addr add " + net + "1/30 dev mf" + n + "a");
    run("ip link set mf" + n + "a up");
    run("ip -n " + router() + " link set lo up");
    run("ip -n " + router() + " addr add " + net + "2/30 dev mf" + n + "b");
    run("ip -n " + router() + " link set mf" + n + "b up");
    run("ip -n " + router() + " addr add " + net + "5/30 dev mf" + n + "c");
    run("ip -n " + router() + " link set mf" + n + "c up");
    run("ip -n " + database() + " link set lo up");
    run("ip -n " + database() + " addr add " + net + "6/30 dev mf" + n + "d");
    run("ip -n " + database() + " link set mf" + n + "d up");
    for (int p = 0; p < max_paths; ++p)
      run("ip -n " + database() + " addr add " + path_address(p) + "/32 dev mf" + n + "d");
    run("ip -n " + database() + " route add default via " + net + "5");
    run("ip -n " + router() + " route add " + net + "16/28 via " + net + "6");
    run("ip netns exec " + router() + " sh -c 'echo 1 > /proc/sys/net/ipv4/ip_forward'");
    run("ip route add " + net + "0/24 via " + net + "2");
  }

  void remove() {
    if (!made_) return;
    made_ = false;
    const std::string n = std::to_string(k_);
    quiet("ip route del 10.77." + n + ".0/24");
    quiet("ip link del mf" + n + "a");  // its peer goes with it
    quiet("ip link del mf" + n + "c");  // here only when the build stopped before moving it
    quiet("ip netns del " + database());
    quiet("ip netns del " + router());
  }

  static bool quiet(const std::string& command) {
    return std::system((command + " > /dev/null 2>&1").c_str()) == 0;
  }
  static void run(const std::string& command) {
    if (!quiet(command)) throw std::runtime_error("fault network: '" + command + "' failed");
  }

  int k_ = 0;
  bool made_ = false;
};

}  // namespace mm::test
