// The answers of a batch request's items (POST /api/query with "queries",
// POST /api/tickets with "tickets"), which come on any thread and in any
// order: the request is answered 200 {"results": [...]}, in the order the
// items were sent, once the last one is in. Each item is settled once.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "api_routes.hpp"
#include "http_server.hpp"
#include "json_codec.hpp"

namespace mm::server {

// The items of a batch body {"<list>": [...]} (the body's only field), each
// read by `read`: a malformed one refuses the whole batch, naming it
// ("<list>[3]: ..."), as do an empty list and one of more than `max`.
template <class Read>
auto read_batch(const json& body, const std::string& list, const std::string& item, std::size_t max,
                Read read) {
  only_fields(body, {list.c_str()}, "the batch");
  const json& items = body[list];
  if (!items.is_array()) throw bad_request(list + " must be a list of " + list);
  if (items.empty()) throw bad_request(list + " must hold at least one " + item);
  if (items.size() > max)
    throw bad_request(list + ": at most " + std::to_string(max) + " " + list +
                      " per request, got " + std::to_string(items.size()));
  std::vector<decltype(read(items[0]))> out;
  out.reserve(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) try {
      out.push_back(read(items[i]));
    } catch (const bad_request& e) {
      throw bad_request(list + "[" + std::to_string(i) + "]: " + e.what());
    }
  return out;
}

class batch_results {
 public:
  static std::shared_ptr<batch_results> make(std::size_t items, http_reply reply) {
    return std::shared_ptr<batch_results>(new batch_results(items, std::move(reply)));
  }

  // Item i's result; the reply goes out with the last. Never throws.
  void settle(std::size_t i, json item) {
    bool last = false;
    {
      std::lock_guard lock(mutex_);
      results_[i] = std::move(item);
      last = --left_ == 0;
    }
    if (!last) return;
    http_response res;
    try {
      send_json(res, {{"results", std::move(results_)}});
    } catch (const std::exception& e) {
      send_error(res, 500, std::string("internal error: ") + e.what());
    }
    reply_(std::move(res));
  }

  // An item that was not done: {"status", "error"}, as the item alone
  // would have been answered.
  void refuse(std::size_t i, int status, const std::string& error) {
    settle(i, {{"status", status}, {"error", error}});
  }

 private:
  batch_results(std::size_t items, http_reply reply)
      : reply_(std::move(reply)), results_(items), left_(items) {}

  http_reply reply_;
  std::mutex mutex_;
  std::vector<json> results_;
  std::size_t left_;
};

}  // namespace mm::server
