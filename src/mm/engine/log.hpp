// Minimal logging: one process-wide sink, stderr with a UTC timestamp unless
// the host application installs its own (a server would route it to its logger).
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace mm {

enum class log_level { debug, info, warning, error };

using log_sink = std::function<void(log_level, std::string_view)>;

// Replaces the sink; an empty function restores the stderr default.
void set_log_sink(log_sink sink);
void log(log_level level, std::string_view message);

}  // namespace mm
