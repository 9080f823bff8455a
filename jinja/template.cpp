#include "jinja/template.hpp"

#include <ctime>

#include "jinja/evaluator.hpp"
#include "jinja/lexer.hpp"
#include "jinja/parser.hpp"

namespace kvbench::jinja {

Template::Template(const std::string& source) : body_(std::make_shared<Body>(parse(tokenize(source)))) {}

std::string Template::render(const Value& context, const RenderOptions& options) const {
  if (!context.is_dict()) throw TemplateRuntimeError("the render context must be a mapping", {});
  return evaluate(*body_, context, options);
}

std::string strftime_local_now(const std::string& format) {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  // Ample for what conversions expand to; bounded like any string the template makes.
  check_string_size(256 + uint64_t{format.size()} * 8);
  std::string buffer(256 + format.size() * 8, '\0');
  const size_t n = std::strftime(buffer.data(), buffer.size(), format.c_str(), &local);
  buffer.resize(n);
  return buffer;
}

}  // namespace kvbench::jinja
