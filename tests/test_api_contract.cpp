// The contract check between the routes the server serves and the
// operations of docs/openapi.json (api_contract.hpp). The real route table is
// checked at every start of the server (every server test); here the check
// itself, on small documents, and the built-in document's own shape.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <set>

#include "api_contract.hpp"

using namespace mm::server;
using json = nlohmann::json;

namespace {

std::string doc_of(const json& paths) {
  return json{{"openapi", "3.1.0"}, {"paths", paths}}.dump();
}

json operation(const std::string& role) {
  return {{"x-role", role}, {"responses", {{"200", {{"description", "OK"}}}}}};
}

bool mentions(const std::vector<std::string>& gaps, const std::string& text) {
  for (const auto& g : gaps)
    if (g.find(text) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("routes and operations that agree leave no gap", "[contract]") {
  const std::string doc = doc_of(
      {{"/api/tickets/{ticket}", {{"get", operation("view")}, {"delete", operation("test")}}},
       {"/api/rebalance", {{"post", operation("admin")}}},
       {"/api/reset", {{"post", operation("admin")}}},
       {"/", {{"get", operation("none")}}}});
  const std::vector<served_route> routes = {{"GET", "/api/tickets/*", role::view, false},
                                            {"DELETE", "/api/tickets/*", role::test, false},
                                            {"POST", "/api/rebalance|reset", role::admin, false},
                                            {"GET", "/", std::nullopt, false},
                                            {"GET", "/app.js", std::nullopt, false}};
  CHECK(contract_gaps(routes, doc).empty());
}

TEST_CASE("a health probe needs its operation, with x-role none", "[contract]") {
  const std::vector<served_route> probe = {{"GET", "/readyz", std::nullopt, true}};
  const auto missing = contract_gaps(probe, doc_of({{"/", {{"get", operation("none")}}}}));
  CHECK(mentions(missing, "GET /readyz is served but docs/openapi.json has no operation"));
  CHECK(contract_gaps(probe, doc_of({{"/readyz", {{"get", operation("none")}}}})).empty());
  CHECK_FALSE(contract_gaps(probe, doc_of({{"/readyz", {{"get", operation("view")}}}})).empty());
}

TEST_CASE(
    "a route without its operation, an operation without its route and a role that "
    "differs are each named",
    "[contract]") {
  const std::string doc = doc_of({{"/api/tickets/{ticket}", {{"get", operation("view")}}},
                                  {"/api/lobbies", {{"post", operation("test")}}},
                                  {"/api/gone", {{"get", operation("view")}}}});
  const std::vector<served_route> routes = {{"GET", "/api/tickets/*", role::view, false},
                                            {"DELETE", "/api/tickets/*", role::test, false},
                                            {"POST", "/api/lobbies", role::admin, false},
                                            {"GET", "/api/openapi.json", std::nullopt, false}};
  const auto gaps = contract_gaps(routes, doc);
  CHECK(gaps.size() == 4);
  CHECK(mentions(gaps, "DELETE /api/tickets/* is served but docs/openapi.json has no operation"));
  CHECK(mentions(gaps, "GET /api/openapi.json is served"));  // /api/ needs one, even without a role
  CHECK(mentions(gaps,
                 "POST /api/lobbies needs the role 'admin' but its operation says "
                 "x-role 'test'"));
  CHECK(mentions(gaps, "GET /api/gone is an operation of docs/openapi.json that no route serves"));
  // One word of "a|b" without its operation is named alone.
  const auto half = contract_gaps({{"POST", "/api/lobbies|gone", role::test, false}},
                                  doc_of({{"/api/lobbies", {{"post", operation("test")}}}}));
  REQUIRE(half.size() == 1);
  CHECK(mentions(half, "POST /api/gone is served"));
  CHECK_FALSE(contract_gaps({}, "not json").empty());
}

TEST_CASE("the built-in document is OpenAPI 3.1 with a role, an id and responses per operation",
          "[contract]") {
  const json doc = json::parse(openapi_document());
  CHECK(doc["openapi"] == "3.1.0");
  std::set<std::string> ids;
  std::size_t operations = 0;
  for (const auto& [path, item] : doc["paths"].items())
    for (const auto& [method, op] : item.items()) {
      INFO(method << " " << path);
      ++operations;
      CHECK(ids.insert(op["operationId"].get<std::string>()).second);
      const std::string r = op["x-role"];
      CHECK((r == "none" || r == "view" || r == "test" || r == "admin"));
      CHECK(op["responses"].size() >= 2);  // a success and at least one error
    }
  CHECK(operations >= 40);
}
