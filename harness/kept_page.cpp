#include "harness/kept_page.hpp"

#include <cmath>
#include <cstdio>
#include <sstream>

#include "harness/output_escaping.hpp"

namespace kvbench::harness {
namespace {

// Kept by every head: dark blue; by none: white (and struck through, so print shows it too).
std::string shade(double share) {
  const int light = static_cast<int>(std::lround(255 - 175 * share));
  char style[96];
  std::snprintf(style, sizeof style, "background:rgb(%d,%d,255)%s", light, light, share == 0.0 ? ";color:#999" : "");
  return style;
}

}  // namespace

std::string kept_page(const KeptView& view) {
  std::ostringstream out;
  out << "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>" << html_escape(view.title) << "</title>\n"
      << "<style>body{font-family:sans-serif;max-width:70em;margin:2em auto}"
         ".layer{font-family:monospace;white-space:pre-wrap;line-height:1.6;margin:.3em 0 1.2em}"
         ".layer span{border-radius:2px}</style></head><body>\n"
      << "<h1>" << html_escape(view.title) << "</h1>\n"
      << "<p>Each token is shaded by the share of the layer's heads that keep it (white: none, dark: all).</p>\n";
  for (size_t l = 0; l < view.kept_share.size(); ++l) {
    out << "<h2>layer " << l << "</h2>\n<div class=\"layer\">";
    for (size_t t = 0; t < view.tokens.size(); ++t) {
      const double share = view.kept_share[l][t];
      char percent[16];
      std::snprintf(percent, sizeof percent, "%.0f%%", 100 * share);
      out << "<span title=\"token " << t << ": kept by " << percent << " of heads\" style=\"" << shade(share) << "\">"
          << html_escape(view.tokens[t]) << "</span>";
    }
    out << "</div>\n";
  }
  out << "</body></html>\n";
  return out.str();
}

}  // namespace kvbench::harness
