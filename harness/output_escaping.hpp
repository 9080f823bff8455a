#pragma once
// Text from a spec, a result file or a path, made safe for the language of each file kvbench
// writes: it is quoted as data there, never read as code (a gnuplot backquote, a shell line, a
// LaTeX command, a Markdown line or an HTML tag).
#include <string>
#include <string_view>

namespace kvbench::harness {

// True when the text holds an ASCII control character (newline, tab, carriage return, DEL, ...).
bool has_control_character(std::string_view text);

// The text on one line: every control character becomes a space.
std::string single_line(std::string_view text);

// HTML text and attribute values: <, >, & and " escaped.
std::string html_escape(std::string_view text);

// Markdown text inside a paragraph or a table cell: one line, with the characters that would start
// structure or markup (|, \, `, <, >, * and _ at word edges, [, ]) escaped.
std::string markdown_text(std::string_view text);

// LaTeX text: one line, the special characters as text commands, `code` as \texttt.
std::string latex_text(std::string_view text);

// A gnuplot string literal in single quotes: no backquote substitution, no backslash escapes, one
// line (a newline would end the command).
std::string gnuplot_string(std::string_view text);

// A shell word in single quotes.
std::string shell_quote(std::string_view text);

}  // namespace kvbench::harness
