#pragma once
// Python str methods the reference pipelines call on prompts and responses.
#include <functional>
#include <string>

namespace kvbench::tasks {

// str.strip() over ASCII whitespace (" \t\n\r\f\v"), as the pipelines apply it to model outputs.
std::string strip(const std::string& s);

// template.format(**fields) for named fields: "{name}" becomes field(name), pasted verbatim (never
// re-parsed); "{{" and "}}" are literal braces. A field with a conversion or format spec
// ("{name!r}", "{name:...}") is refused, as is a single brace; `field` throws for a name it
// lacks (Python's KeyError).
std::string python_format(const std::string& format, const std::function<std::string(const std::string&)>& field);

}  // namespace kvbench::tasks
