// scalability_report's figures and its JSON and SVG forms (analysis.hpp).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <stdexcept>
#include <string>

#include "heist/analysis.hpp"

namespace heist {
namespace {

double seconds(std::chrono::nanoseconds d) {
  return static_cast<double>(d.count()) * 1e-9;
}

void check_threads(std::size_t p, const char* where) {
  if (p == 0) {
    throw std::invalid_argument(std::string("heist::scalability_report::") + where +
                                ": p must be at least 1, got 0");
  }
}

std::string number(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.6g", v);
  return b;
}

std::string fixed1(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f", v);
  return b;
}

}  // namespace

double scalability_report::parallelism() const noexcept {
  if (span.count() <= 0) return 1.0;
  return static_cast<double>(work.count()) / static_cast<double>(span.count());
}

double scalability_report::burdened_parallelism() const noexcept {
  if (burdened_span.count() <= 0) return 1.0;
  return static_cast<double>(work.count()) / static_cast<double>(burdened_span.count());
}

double scalability_report::speedup_bound(std::size_t p) const {
  check_threads(p, "speedup_bound");
  return std::min(static_cast<double>(p), parallelism());
}

double scalability_report::predicted_speedup(std::size_t p) const {
  check_threads(p, "predicted_speedup");
  const double w = seconds(work);
  const double denominator = w / static_cast<double>(p) + seconds(burdened_span);
  if (denominator <= 0) return 1.0;
  return w / denominator;
}

void scalability_report::write_json(std::ostream& out) const {
  // The fields' names; durations in nanoseconds.
  out << "{\"work\": " << work.count() << ", \"span\": " << span.count()
      << ", \"burdened_span\": " << burdened_span.count() << ", \"strands\": " << strands
      << ", \"not_joined\": " << not_joined << ", \"steal_cost\": " << steal_cost.count()
      << ", \"parallelism\": " << number(parallelism())
      << ", \"burdened_parallelism\": " << number(burdened_parallelism())
      << ", \"predicted_speedup\": {";
  bool first = true;
  for (std::size_t p = 1; p <= 256; p *= 2) {
    out << (first ? "" : ", ") << "\"" << p << "\": " << number(predicted_speedup(p));
    first = false;
  }
  out << "}, \"speedup_bound\": {";
  first = true;
  for (std::size_t p = 1; p <= 256; p *= 2) {
    out << (first ? "" : ", ") << "\"" << p << "\": " << number(speedup_bound(p));
    first = false;
  }
  out << "}, \"measured\": [";
  first = true;
  for (const auto& [threads, speedup] : measured) {
    out << (first ? "" : ", ") << "{\"threads\": " << threads
        << ", \"speedup\": " << number(speedup) << "}";
    first = false;
  }
  out << "]}\n";
}

void scalability_report::write_svg(std::ostream& out, std::size_t max_threads) const {
  if (max_threads < 2 || max_threads > 65536) {
    throw std::invalid_argument(
        "heist::scalability_report::write_svg: max_threads must be in [2, 65536], got " +
        std::to_string(max_threads));
  }
  const double w = 720, h = 420, left = 70, right = 250, top = 40, bottom = 60;
  const double span_x = w - left - right, span_y = h - top - bottom;
  const double top_value = std::log2(static_cast<double>(max_threads));
  const auto x_of = [&](double threads) {
    return left + span_x * std::log2(std::max(threads, 1.0)) / top_value;
  };
  const auto y_of = [&](double speedup) {
    const double clamped = std::clamp(speedup, 1.0, static_cast<double>(max_threads));
    return top + span_y * (1.0 - std::log2(clamped) / top_value);
  };
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << w << "\" height=\"" << h
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      << "<text x=\"" << left << "\" y=\"22\" font-size=\"14\">Speedup against threads: "
      << "parallelism " << fixed1(parallelism()) << ", burdened " << fixed1(burdened_parallelism())
      << "</text>\n";
  // Axes and ticks at powers of two.
  for (double p = 1; p <= static_cast<double>(max_threads); p *= 2) {
    const double x = x_of(p), y = y_of(p);
    out << "<line x1=\"" << x << "\" y1=\"" << top << "\" x2=\"" << x << "\" y2=\"" << top + span_y
        << "\" stroke=\"#eee\"/>\n<text x=\"" << x << "\" y=\"" << top + span_y + 16
        << "\" text-anchor=\"middle\">" << p << "</text>\n"
        << "<line x1=\"" << left << "\" y1=\"" << y << "\" x2=\"" << left + span_x << "\" y2=\""
        << y << "\" stroke=\"#eee\"/>\n<text x=\"" << left - 6 << "\" y=\"" << y + 4
        << "\" text-anchor=\"end\">" << p << "</text>\n";
  }
  out << "<text x=\"" << left + span_x / 2 << "\" y=\"" << h - 18
      << "\" text-anchor=\"middle\">threads (log scale)</text>\n"
      << "<text x=\"18\" y=\"" << top + span_y / 2 << "\" transform=\"rotate(-90 18 "
      << top + span_y / 2 << ")\" text-anchor=\"middle\">speedup (log scale)</text>\n";
  const auto curve = [&](const char* colour, const char* dash, auto speedup_at) {
    out << "<polyline fill=\"none\" stroke=\"" << colour << "\" stroke-width=\"2\""
        << (dash[0] != '\0' ? std::string(" stroke-dasharray=\"") + dash + "\"" : std::string())
        << " points=\"";
    for (int k = 0; k <= 64; ++k) {
      const double p = std::exp2(top_value * k / 64.0);
      out << x_of(p) << "," << y_of(speedup_at(p)) << " ";
    }
    out << "\"/>\n";
  };
  curve("#bbb", "4 4", [](double p) { return p; });
  curve("#1f77b4", "", [&](double p) { return std::min(p, parallelism()); });
  curve("#d62728", "", [&](double p) {
    const double wk = seconds(work);
    const double d = wk / p + seconds(burdened_span);
    return d > 0 ? wk / d : 1.0;
  });
  for (const auto& [threads, speedup] : measured) {
    out << "<circle cx=\"" << x_of(static_cast<double>(threads)) << "\" cy=\"" << y_of(speedup)
        << "\" r=\"4\" fill=\"#2ca02c\"/>\n";
  }
  const double lx = left + span_x + 14;
  const char* labels[] = {"perfect (p)", "bound min(p, parallelism)", "predicted (burdened)",
                          "measured"};
  const char* colours[] = {"#bbb", "#1f77b4", "#d62728", "#2ca02c"};
  for (int i = 0; i < 4; ++i) {
    const double y = top + 10 + 20 * i;
    out << "<rect x=\"" << lx << "\" y=\"" << y - 8 << "\" width=\"12\" height=\"4\" fill=\""
        << colours[i] << "\"/><text x=\"" << lx + 18 << "\" y=\"" << y << "\">" << labels[i]
        << "</text>\n";
  }
  out << "</svg>\n";
}

}  // namespace heist
