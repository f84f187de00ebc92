// Certificates for the actor port's TLS tests, made with the openssl command
// in a temp dir: a deployment's CA with certificates it signed, and a
// stranger's CA with one of its own.
#pragma once

#include <catch2/catch.hpp>
#include <cstdlib>
#include <string>

#include "mm/actors/actor_tls.hpp"
#include "mm/testing/temp_dir.hpp"

namespace mm::test {

struct certificates {
  test::temp_dir dir;
  std::string path(const std::string& name) const { return dir.file(name); }

  certificates() {
    make_ca("ca");
    make_ca("rogue-ca");
    sign("server", "ca");
    sign("game", "ca");
    sign("game2", "ca");
    sign("game3", "ca");
    sign("stranger", "rogue-ca");
  }
  actors::actor_tls node(const std::string& name, const std::string& ca = "ca") const {
    return {path(name + ".pem"), path(name + ".key"), path(ca + ".pem")};
  }

 private:
  void run(const std::string& command) const {
    INFO(command);
    REQUIRE(std::system((command + " >/dev/null 2>&1").c_str()) == 0);
  }
  void make_ca(const std::string& name) const {
    run("openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
        "-days 2 -subj /CN=" +
        name + " -keyout " + path(name + ".key") + " -out " + path(name + ".pem"));
  }
  void sign(const std::string& name, const std::string& ca) const {
    run("openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "
        "/CN=" +
        name + " -keyout " + path(name + ".key") + " -out " + path(name + ".csr"));
    run("openssl x509 -req -days 2 -in " + path(name + ".csr") + " -CA " + path(ca + ".pem") +
        " -CAkey " + path(ca + ".key") + " -CAcreateserial -out " + path(name + ".pem"));
  }
};

}  // namespace mm::test
