#include "mm/sim/svg_chart.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace mm::sim {
namespace {

constexpr double width = 640, height = 360;
constexpr double left = 64, right = 16, top = 36, bottom = 64;  // plot margins
constexpr const char* palette[] = {"#2b6cb0", "#dd6b20", "#38a169", "#e53e3e",
                                   "#805ad5", "#718096", "#d69e2e", "#319795"};

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

// A tick label: no more digits than the step needs.
std::string label(double v, double step) {
  char buf[32];
  const int decimals = step >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(step)));
  std::snprintf(buf, sizeof buf, "%.*f", std::min(decimals, 6), v);
  return buf;
}

// A step of 1, 2 or 5 times a power of ten giving about `ticks` ticks.
double nice_step(double range, int ticks) {
  if (!(range > 0)) return 1;
  const double raw = range / ticks;
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (raw <= m * p) return m * p;
  return 10 * p;
}

}  // namespace

std::string xml_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += ch;
    }
  }
  return out;
}

std::string render_svg(const chart& c) {
  const std::size_t n = c.x.size();
  // The y range: the data's (stacked: the sums per x), widened to nice ticks.
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (std::size_t i = 0; i < n; ++i) {
    double stack = 0;
    for (const auto& s : c.series) {
      if (i >= s.y.size() || !std::isfinite(s.y[i])) continue;
      if (c.stacked_bars) {
        stack += s.y[i];
        hi = std::max(hi, stack);
        lo = std::min(lo, 0.0);
      } else {
        lo = std::min(lo, s.y[i]);
        hi = std::max(hi, s.y[i]);
      }
    }
  }
  if (!std::isfinite(lo)) lo = 0, hi = 1;
  if (lo >= 0) lo = 0;
  if (c.y_min) lo = *c.y_min;
  if (c.y_max) hi = *c.y_max;
  if (!(hi > lo)) hi = lo + 1;
  const double y_step = nice_step(hi - lo, 5);
  lo = std::floor(lo / y_step) * y_step;
  hi = std::ceil(hi / y_step) * y_step;
  const double x_lo = n ? c.x.front() : 0, x_hi = n > 1 ? c.x.back() : x_lo + 1;
  const double slot = n ? (x_hi - x_lo) / std::max<double>(static_cast<double>(n) - 1, 1) : 1;
  const double pad = c.stacked_bars ? slot / 2 : 0;  // bars need half a slot each side
  const double plot_w = width - left - right, plot_h = height - top - bottom;
  const auto px = [&](double x) {
    return left + (x - x_lo + pad) / (x_hi - x_lo + 2 * pad) * plot_w;
  };
  const auto py = [&](double y) { return top + (hi - y) / (hi - lo) * plot_h; };

  std::string out =
      "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 640 360\" width=\"640\" "
      "height=\"360\" font-family=\"sans-serif\" font-size=\"11\">\n"
      "<rect width=\"640\" height=\"360\" fill=\"#ffffff\"/>\n";
  out += "<text x=\"320\" y=\"20\" text-anchor=\"middle\" font-size=\"14\" font-weight=\"bold\">" +
         xml_escape(c.title) + "</text>\n";
  // Grid and y ticks.
  for (double y = lo; y <= hi + y_step / 2; y += y_step) {
    out += "<line x1=\"" + num(left) + "\" x2=\"" + num(width - right) + "\" y1=\"" + num(py(y)) +
           "\" y2=\"" + num(py(y)) + "\" stroke=\"#e2e8f0\"/>\n";
    out += "<text x=\"" + num(left - 6) + "\" y=\"" + num(py(y) + 4) + "\" text-anchor=\"end\">" +
           label(y, y_step) + "</text>\n";
  }
  // X ticks.
  const double x_step = c.x_tick_step > 0 ? c.x_tick_step : nice_step(x_hi - x_lo, 8);
  for (double x = std::ceil(x_lo / x_step) * x_step; x <= x_hi + x_step / 1000; x += x_step)
    out += "<text x=\"" + num(px(x)) + "\" y=\"" + num(height - bottom + 16) +
           "\" text-anchor=\"middle\">" + label(x, x_step) + "</text>\n";
  out += "<line x1=\"" + num(left) + "\" x2=\"" + num(width - right) + "\" y1=\"" +
         num(height - bottom) + "\" y2=\"" + num(height - bottom) + "\" stroke=\"#4a5568\"/>\n";
  out += "<text x=\"" + num(left + plot_w / 2) + "\" y=\"" + num(height - bottom + 34) +
         "\" text-anchor=\"middle\">" + xml_escape(c.x_label) + "</text>\n";
  out += "<text transform=\"translate(14 " + num(top + plot_h / 2) +
         ") rotate(-90)\" text-anchor=\"middle\">" + xml_escape(c.y_label) + "</text>\n";

  std::vector<double> base(n, 0);
  for (std::size_t k = 0; k < c.series.size(); ++k) {
    const chart_series& s = c.series[k];
    const std::string color = s.color.empty() ? palette[k % std::size(palette)] : s.color;
    if (c.stacked_bars) {
      const double bar_w =
          std::max(1.0, plot_w / static_cast<double>(std::max<std::size_t>(n, 1)) * 0.8);
      for (std::size_t i = 0; i < n && i < s.y.size(); ++i) {
        if (!std::isfinite(s.y[i]) || s.y[i] <= 0) continue;
        const double y0 = py(base[i]), y1 = py(base[i] + s.y[i]);
        out += "<rect x=\"" + num(px(c.x[i]) - bar_w / 2) + "\" y=\"" + num(y1) + "\" width=\"" +
               num(bar_w) + "\" height=\"" + num(y0 - y1) + "\" fill=\"" + color + "\"/>\n";
        base[i] += s.y[i];
      }
    } else {
      std::string path;
      bool pen_down = false;
      for (std::size_t i = 0; i < n && i < s.y.size(); ++i) {
        if (!std::isfinite(s.y[i])) {
          pen_down = false;
          continue;
        }
        path +=
            (pen_down ? " L" : " M") + num(px(c.x[i])) + " " + num(py(std::clamp(s.y[i], lo, hi)));
        pen_down = true;
      }
      out += "<path d=\"" + path + "\" fill=\"none\" stroke=\"" + color + "\" stroke-width=\"2\"" +
             (s.dashed ? " stroke-dasharray=\"6 4\"" : "") + "/>\n";
    }
    // Legend, one row under the axis label.
    const double lx =
        left + static_cast<double>(k) *
                   (plot_w / static_cast<double>(std::max<std::size_t>(c.series.size(), 1)));
    out += "<rect x=\"" + num(lx) + "\" y=\"" + num(height - 14) +
           "\" width=\"12\" height=\"8\" fill=\"" + color + "\"/>\n";
    out += "<text x=\"" + num(lx + 16) + "\" y=\"" + num(height - 6) + "\">" + xml_escape(s.name) +
           "</text>\n";
  }
  out += "</svg>\n";
  return out;
}

}  // namespace mm::sim
