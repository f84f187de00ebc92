// Charts as SVG text, written by the project itself (no plotting dependency):
// lines or stacked bars over a numeric x axis, with axes, ticks and a legend.
// Enough for the simulator's report; a browser shows them as they are.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace mm::sim {

struct chart_series {
  std::string name;
  std::vector<double> y;  // one per x; a NaN leaves a gap
  std::string color;      // CSS colour; empty: the palette's next
  bool dashed = false;
};

struct chart {
  std::string title, x_label, y_label;
  std::vector<double> x;
  std::vector<chart_series> series;
  bool stacked_bars = false;           // bars stacked per x instead of lines
  std::optional<double> y_min, y_max;  // unset: from the data (y_min 0 when all are >= 0)
  double x_tick_step = 0;              // 0: chosen from the range
};

// The chart as a standalone SVG document (640 x 360 user units). Names and
// labels are escaped.
std::string render_svg(const chart& c);

// `s` with &, <, >, " and ' escaped for XML and HTML text and attributes.
std::string xml_escape(const std::string& s);

}  // namespace mm::sim
