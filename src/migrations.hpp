// The schema migrations compiled in from schema/*.sql, in version order.
#pragma once

#include <string_view>
#include <vector>

namespace mm {

struct migration {
  int version;
  std::string_view name;
  std::string_view sql;
};

const std::vector<migration>& migrations();

}  // namespace mm
