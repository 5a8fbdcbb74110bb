// A few SVG primitives and the bar chart heist-bench draws. Charts are read by people: every
// backend keeps one colour in every chart, axis ticks fall on round values, a chart whose
// values span more than 10x uses a log axis, long category labels are slanted so they never
// run into each other, and the axis title stands clear of the tick labels.
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

// A tick value as a person writes it: no trailing zeros, thousands as "k".
inline std::string tick_label(double v) {
  char b[32];
  if (v != 0 && std::fabs(v) >= 10000) {
    std::snprintf(b, sizeof b, "%gk", v / 1000);
  } else {
    std::snprintf(b, sizeof b, "%g", v);
  }
  return b;
}

// A bar's value: three significant digits.
inline std::string value_label(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3g", v);
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
                        int size = 12, double rotate = 0) {
  std::string s = "<text x=\"" + num(x) + "\" y=\"" + num(y) + "\" font-size=\"" +
                  std::to_string(size) + "\" font-family=\"sans-serif\" text-anchor=\"" + anchor +
                  "\"";
  if (rotate != 0) {
    s += " transform=\"rotate(" + num(rotate) + " " + num(x) + " " + num(y) + ")\"";
  }
  return s + ">" + escape(t) + "</text>\n";
}

inline std::string line(double x1, double y1, double x2, double y2, const char* stroke = "#999") {
  return "<line x1=\"" + num(x1) + "\" y1=\"" + num(y1) + "\" x2=\"" + num(x2) + "\" y2=\"" +
         num(y2) + "\" stroke=\"" + stroke + "\"/>\n";
}

// One colour per backend, the same in every chart: the usual backends by name (heist's in
// blues, oneTBB's in reds, OpenMP's in greens), any other the next unused colour of the
// palette, kept for the rest of the run.
inline const char* colour_of(const std::string& series) {
  static const std::pair<const char*, const char*> known[] = {
      {"heist", "#4477aa"},         {"heist auto", "#4477aa"},
      {"heist static", "#77aadd"},  {"heist affinity", "#114477"},
      {"heist random", "#66ccee"},  {"heist round_robin", "#88ccee"},
      {"heist none", "#aaaacc"},    {"oneTBB", "#ee6677"},
      {"oneTBB auto", "#ee6677"},   {"OpenMP tasks", "#228833"},
      {"OpenMP static", "#228833"}, {"OpenMP guided", "#66aa55"},
      {"serial", "#555555"},        {"lock-based pool", "#ccbb44"},
      {"central queue", "#aa3377"}, {"round-robin dealing", "#ee8866"},
  };
  for (const auto& [name, colour] : known) {
    if (series == name) return colour;
  }
  // Others: heist's variants in blues, oneTBB's in reds, OpenMP's in greens, the rest from a
  // general palette; each keeps the colour it first got.
  static const char* const blues[] = {"#88aadd", "#335588", "#99bbee", "#5588bb"};
  static const char* const reds[] = {"#cc3344", "#ffaaaa", "#aa2233"};
  static const char* const greens[] = {"#44aa55", "#117733", "#88cc77", "#55bb99", "#336633"};
  static const char* const rest[] = {"#ddaa33", "#994455", "#997700", "#bbbbbb", "#44bb99",
                                     "#882255", "#332288", "#999933", "#000000", "#99ddff"};
  static std::vector<std::pair<std::string, const char*>> assigned;
  for (const auto& [name, colour] : assigned) {
    if (name == series) return colour;
  }
  auto next = [&](const char* const* palette, std::size_t n, const char* prefix) {
    std::size_t used = 0;
    for (const auto& a : assigned) {
      if (prefix == nullptr ? a.first.rfind("heist", 0) != 0 && a.first.rfind("oneTBB", 0) != 0 &&
                                  a.first.rfind("OpenMP", 0) != 0
                            : a.first.rfind(prefix, 0) == 0) {
        ++used;
      }
    }
    return palette[used % n];
  };
  const char* colour;
  if (series.rfind("heist", 0) == 0) {
    colour = next(blues, 4, "heist");
  } else if (series.rfind("oneTBB", 0) == 0) {
    colour = next(reds, 3, "oneTBB");
  } else if (series.rfind("OpenMP", 0) == 0) {
    colour = next(greens, 5, "OpenMP");
  } else {
    colour = next(rest, 10, nullptr);
  }
  assigned.emplace_back(series, colour);
  return colour;
}

// Round tick values for [lo, hi] on a linear axis starting at 0: steps of 1, 2 or 5 times a
// power of ten, four to seven ticks.
inline std::vector<double> linear_ticks(double hi) {
  if (hi <= 0) hi = 1;
  const double raw = hi / 5;
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  double step = p;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    step = m * p;
    if (hi / step <= 6) break;
  }
  std::vector<double> t;
  for (double v = 0; v < hi + step * 0.999; v += step)
    t.push_back(v);
  return t;
}

// A grouped bar chart: one group per category, one bar per series.
struct bar_chart {
  std::string title;
  std::string y_label;
  std::vector<std::string> categories;
  std::vector<std::string> series;
  std::vector<std::vector<double>> values;  // [series][category], NaN = missing
  // A reference line (e.g. 1.0 on a ratio chart), NaN for none.
  double reference = std::nan("");

  std::string render() const {
    double vmax = 0, vmin = 0;
    for (const auto& s : values) {
      for (double v : s) {
        if (std::isnan(v) || v <= 0) continue;
        vmax = std::max(vmax, v);
        vmin = vmin == 0 ? v : std::min(vmin, v);
      }
    }
    if (vmax <= 0) vmax = vmin = 1;
    const bool log_axis = vmax / vmin > 10;

    // Layout: category labels slanted under the axis, a legend to the right.
    std::size_t longest = 0;
    for (const std::string& c : categories)
      longest = std::max(longest, c.size());
    std::size_t legend_w = 0;
    for (const std::string& s : series)
      legend_w = std::max(legend_w, s.size());
    const double group_w =
        std::max(60.0, 16.0 * static_cast<double>(std::max<std::size_t>(series.size(), 1)) + 20);
    const double char_w = 6.5;  // an 11-pixel sans-serif character, about
    const bool slant = static_cast<double>(longest) * char_w > group_w - 8;
    // A label slanted at 35 degrees reaches cos(35) of its length to the left of its bar
    // group's middle and sin(35) of it down: the margins make room for the first and longest.
    const double reach_left = slant ? 0.82 * char_w * static_cast<double>(longest) : 0;
    const double left = std::max(90.0, reach_left - group_w / 2 + 16);
    const double top = 48, plot_h = 260;
    const double plot_w =
        group_w * static_cast<double>(std::max<std::size_t>(categories.size(), 1));
    const double label_h = slant ? 0.58 * char_w * static_cast<double>(longest) + 24 : 24;
    const double width = std::max(left + plot_w + 40 + 7.0 * static_cast<double>(legend_w) + 30,
                                  left + 8.5 * static_cast<double>(title.size()) + 20);
    const double height = top + plot_h + label_h + 20;

    // The axis: value -> y.
    double lo = 0, hi = 0;
    std::vector<double> ticks;
    if (log_axis) {
      lo = std::pow(10.0, std::floor(std::log10(vmin)));
      if (vmin / lo < 2) lo /= 10;  // the smallest bar stays visible
      hi = std::pow(10.0, std::ceil(std::log10(vmax)));
      for (double v = lo; v <= hi * 1.0001; v *= 10)
        ticks.push_back(v);
    } else {
      ticks = linear_ticks(vmax);
      hi = ticks.back();
    }
    auto y_of = [&](double v) {
      const double f =
          log_axis ? (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo)) : v / hi;
      return top + plot_h - plot_h * f;
    };

    std::string out = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(width) +
                      "\" height=\"" + num(height) + "\">\n";
    out += rect(0, 0, width, height, "#ffffff");
    out += text(left, 24, title, "start", 15);
    // The axis title, vertical, left of the tick labels.
    out += text(left - 50, top + plot_h / 2, y_label + (log_axis ? " (log scale)" : ""), "middle",
                11, -90);
    for (double v : ticks) {
      const double y = y_of(v);
      out += line(left, y, left + plot_w, y, "#e0e0e0");
      out += text(left - 6, y + 4, tick_label(v), "end", 10);
    }
    if (!std::isnan(reference) && reference > 0 && reference <= hi &&
        (!log_axis || reference >= lo)) {
      const double y = y_of(reference);
      out += line(left, y, left + plot_w, y, "#333333");
    }
    const double bar_w =
        (group_w - 16) / static_cast<double>(std::max<std::size_t>(series.size(), 1));
    for (std::size_t c = 0; c < categories.size(); ++c) {
      const double gx = left + group_w * static_cast<double>(c) + 8;
      for (std::size_t s = 0; s < series.size(); ++s) {
        const double v = values[s][c];
        if (std::isnan(v) || v < 0) continue;
        // A zero has no bar (none on a log axis): its label says 0.
        const double y = v == 0 ? top + plot_h : y_of(log_axis ? std::max(v, lo) : v);
        out += rect(gx + bar_w * static_cast<double>(s), y, bar_w - 1, top + plot_h - y,
                    colour_of(series[s]), series[s] + " / " + categories[c] + ": " + num(v));
        // Few bars: each says its value.
        if (categories.size() * series.size() <= 12 || v == 0) {
          out +=
              text(gx + bar_w * (static_cast<double>(s) + 0.5), y - 4, value_label(v), "middle", 9);
        }
      }
      const double cx = gx + (group_w - 16) / 2;
      if (slant) {
        out += text(cx, top + plot_h + 14, categories[c], "end", 11, -35);
      } else {
        out += text(cx, top + plot_h + 16, categories[c], "middle", 11);
      }
    }
    out += line(left, top + plot_h, left + plot_w, top + plot_h, "#333");
    out += line(left, top, left, top + plot_h, "#333");
    for (std::size_t s = 0; s < series.size(); ++s) {
      const double y = top + 10 + 18.0 * static_cast<double>(s);
      out += rect(left + plot_w + 20, y - 10, 12, 12, colour_of(series[s]));
      out += text(left + plot_w + 38, y, series[s], "start", 11);
    }
    return out + "</svg>\n";
  }
};

}  // namespace bench::svg
