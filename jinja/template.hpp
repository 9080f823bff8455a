#pragma once
// A parsed Jinja template, rendered as Jinja2 3.1 renders it in the environment transformers'
// apply_chat_template builds: ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
// with the loopcontrols extension (break/continue), the globals raise_exception(msg) and
// strftime_now(fmt), and a tojson filter that does not escape non-ASCII. See jinja/DESIGN.md for
// the supported subset.
#include <functional>
#include <memory>
#include <string>

#include "jinja/ast.hpp"
#include "jinja/error.hpp"
#include "jinja/limits.hpp"
#include "jinja/value.hpp"

namespace kvbench::jinja {

struct RenderOptions {
  // strftime_now(fmt): the local time formatted by strftime; tests replace the clock.
  std::function<std::string(const std::string& format)> strftime_now;
  // The render's work budget (jinja/limits.hpp); running out is a TemplateRuntimeError.
  uint64_t max_steps = kMaxSteps;
};

class Template {
 public:
  // Throws TemplateSyntaxError naming line and column.
  explicit Template(const std::string& source);

  // `context` is a dict of the template's variables (messages, add_generation_prompt,
  // bos_token...). Throws TemplateRaised (the template called raise_exception) or
  // TemplateRuntimeError, also when the template exceeds a limit of jinja/limits.hpp.
  std::string render(const Value& context, const RenderOptions& options = {}) const;

 private:
  std::shared_ptr<const Body> body_;
};

// strftime of the local time now, the default of RenderOptions::strftime_now.
std::string strftime_local_now(const std::string& format);

}  // namespace kvbench::jinja
