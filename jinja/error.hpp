#pragma once
// Errors a template raises. Every error names the template line and column it comes from.
#include <stdexcept>
#include <string>

namespace kvbench::jinja {

struct SourceLocation {
  int line = 0;    // 1-based; 0 = unknown
  int column = 0;  // 1-based, in bytes
};

// Base: message() is the bare text (what Jinja2's exception would say); what() adds the location.
class TemplateError : public std::runtime_error {
 public:
  TemplateError(const std::string& kind, const std::string& message, SourceLocation where)
      : std::runtime_error(kind + " at line " + std::to_string(where.line) + ", column " +
                           std::to_string(where.column) + ": " + message),
        message_(message),
        where_(where) {}
  const std::string& message() const { return message_; }
  SourceLocation where() const { return where_; }

 private:
  std::string message_;
  SourceLocation where_;
};

// The template cannot be parsed: unknown tag, unclosed block, unsupported construct.
class TemplateSyntaxError : public TemplateError {
 public:
  TemplateSyntaxError(const std::string& message, SourceLocation where)
      : TemplateError("template syntax error", message, where) {}
};

// Rendering failed: an undefined value used, a type error, an unsafe attribute.
class TemplateRuntimeError : public TemplateError {
 public:
  TemplateRuntimeError(const std::string& message, SourceLocation where)
      : TemplateError("template error", message, where) {}
};

// The template itself called raise_exception(message) (transformers' TemplateError).
class TemplateRaised : public TemplateError {
 public:
  TemplateRaised(const std::string& message, SourceLocation where)
      : TemplateError("template raised an exception", message, where) {}
};

}  // namespace kvbench::jinja
