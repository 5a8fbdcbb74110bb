// A few SVG primitives and the two chart shapes heist-bench draws.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace bench::svg {

inline std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
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
      default:
        out += c;
    }
  }
  return out;
}

inline std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f", v);
  return b;
}

inline std::string rect(double x, double y, double w, double h, const std::string& fill,
                        const std::string& title = {}) {
  std::string s = "<rect x=\"" + num(x) + "\" y=\"" + num(y) + "\" width=\"" +
                  num(std::max(w, 0.3)) + "\" height=\"" + num(h) + "\" fill=\"" + fill + "\"";
  if (title.empty()) return s + "/>\n";
  return s + "><title>" + escape(title) + "</title></rect>\n";
}

inline std::string text(double x, double y, const std::string& t, const char* anchor = "start",
                        int size = 12) {
  return "<text x=\"" + num(x) + "\" y=\"" + num(y) + "\" font-size=\"" + std::to_string(size) +
         "\" font-family=\"sans-serif\" text-anchor=\"" + anchor + "\">" + escape(t) + "</text>\n";
}

inline std::string line(double x1, double y1, double x2, double y2, const char* stroke = "#999") {
  return "<line x1=\"" + num(x1) + "\" y1=\"" + num(y1) + "\" x2=\"" + num(x2) + "\" y2=\"" +
         num(y2) + "\" stroke=\"" + stroke + "\"/>\n";
}

inline const char* palette(std::size_t i) {
  static const char* colours[] = {"#4477aa", "#ee6677", "#228833", "#ccbb44", "#66ccee",
                                  "#aa3377", "#bbbbbb", "#000000", "#ee8866", "#44bb99"};
  return colours[i % (sizeof colours / sizeof colours[0])];
}

// A grouped bar chart: one group per category, one bar per series.
struct bar_chart {
  std::string title;
  std::string y_label;
  std::vector<std::string> categories;
  std::vector<std::string> series;
  std::vector<std::vector<double>> values;  // [series][category], NaN = missing

  std::string render() const {
    const double width = 140.0 + 110.0 * static_cast<double>(categories.size());
    const double height = 380;
    const double left = 70, top = 40, plot_h = 240;
    double vmax = 0;
    for (const auto& s : values) {
      for (double v : s) {
        if (!std::isnan(v)) vmax = std::max(vmax, v);
      }
    }
    if (vmax <= 0) vmax = 1;
    std::string out = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(width + 160) +
                      "\" height=\"" + num(height) + "\">\n";
    out += rect(0, 0, width + 160, height, "#ffffff");
    out += text(left, 22, title, "start", 15);
    out += text(16, top + plot_h / 2, y_label, "start", 11);
    for (int t = 0; t <= 4; ++t) {
      const double v = vmax * t / 4.0;
      const double y = top + plot_h - plot_h * t / 4.0;
      out += line(left, y, width, y, "#e0e0e0");
      out += text(left - 6, y + 4, num(v), "end", 10);
    }
    const double group_w = (width - left) / std::max<std::size_t>(categories.size(), 1);
    const double bar_w = (group_w - 20) / std::max<std::size_t>(series.size(), 1);
    for (std::size_t c = 0; c < categories.size(); ++c) {
      const double gx = left + group_w * static_cast<double>(c) + 10;
      for (std::size_t s = 0; s < series.size(); ++s) {
        const double v = values[s][c];
        if (std::isnan(v)) continue;
        const double h = plot_h * v / vmax;
        out += rect(gx + bar_w * static_cast<double>(s), top + plot_h - h, bar_w - 2, h, palette(s),
                    series[s] + " / " + categories[c] + ": " + num(v));
      }
      out += text(gx + (group_w - 20) / 2, top + plot_h + 16, categories[c], "middle", 11);
    }
    out += line(left, top + plot_h, width, top + plot_h, "#333");
    for (std::size_t s = 0; s < series.size(); ++s) {
      const double y = top + 10 + 18.0 * static_cast<double>(s);
      out += rect(width + 12, y - 10, 12, 12, palette(s));
      out += text(width + 30, y, series[s], "start", 11);
    }
    return out + "</svg>\n";
  }
};

}  // namespace bench::svg
