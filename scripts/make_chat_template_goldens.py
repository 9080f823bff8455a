#!/usr/bin/env python3
"""Records the chat-template goldens kvbench's Jinja interpreter is tested against.

Renders with Jinja2 (Debian's python3-jinja2, 3.1.x) configured the way transformers'
apply_chat_template configures it (set up here from that behaviour, not copied):
  * jinja2.sandbox.ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    with the jinja2.ext.loopcontrols extension;
  * a `tojson` filter that is json.dumps(x, ensure_ascii=False, indent, separators, sort_keys)
    (Jinja's own tojson HTML-escapes, transformers' does not);
  * globals raise_exception(msg) -> jinja2.TemplateError(msg), strftime_now(fmt) (a fixed clock
    here, 2026-11-23 12:00:00, so the recordings are reproducible; the C++ test uses the same);
  * render(messages=..., tools=<list or None>, documents=None, add_generation_prompt=...,
    **special tokens (bos_token/eos_token where the model has them), **kwargs).

Writes tests/fixtures/chat_templates/goldens.json (real templates x conversations) and
tests/fixtures/chat_templates/unit_cases.json (one small template per feature).
Usage: python3 scripts/make_chat_template_goldens.py   (from the repository root, ../shared beside it)
"""
import datetime
import json
import os
import sys

import jinja2
import jinja2.ext
from jinja2.sandbox import ImmutableSandboxedEnvironment

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "chat_templates")
SHARED = os.path.join(os.path.dirname(ROOT), "shared")
FIXED_NOW = datetime.datetime(2026, 11, 23, 12, 0, 0)


def make_environment():
    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(value, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    def strftime_now(fmt):
        return FIXED_NOW.strftime(fmt)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


ENV = make_environment()


def render(source, context):
    try:
        return {"rendered": ENV.from_string(source).render(**context)}
    except jinja2.exceptions.TemplateSyntaxError as e:
        return {"error": str(e.message), "error_type": "TemplateSyntaxError"}
    except Exception as e:  # noqa: BLE001 - every failure is recorded with its type
        return {"error": str(e), "error_type": type(e).__name__}


# ---------------------------------------------------------------------------------------------
# Real templates x conversations.

TOOLS = [{
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather in a city",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "City name, e.g. Zürich"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            },
            "required": ["city"],
        },
    },
}]

U1 = {"role": "user", "content": "Summarize the following article in one sentence.\n\nThe cat sat on the mat."}
A1 = {"role": "assistant", "content": "A cat sat on a mat."}
U2 = {"role": "user", "content": "Now in French, please."}
SYS = {"role": "system", "content": "You are a helpful assistant."}
TOOL_CALL = {"role": "assistant", "content": "", "tool_calls": [
    {"id": "call12345", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]}
TOOL_RESULT = {"role": "tool", "tool_call_id": "call12345", "name": "get_weather", "content": "{\"temperature\": 21}"}

CONVERSATIONS = {
    "single": [U1],
    "system": [SYS, U1],
    "multi": [U1, A1, U2],
    "system-multi": [SYS, U1, A1, U2],
    "whitespace": [{"role": "user", "content": "  padded question \n\n"}],
    "unicode": [{"role": "user", "content": "Grüße aus Zürich — 你好 🌍 \"quoted\" <tag> & 'single'"}],
    "assistant-last": [U1, A1],
    "not-alternating": [U1, U2],
    "thinking": [U1, {"role": "assistant", "content": "<think>\nLet me think.\n</think>\n\nA cat sat on a mat."}, U2],
    "tool-call": [{"role": "user", "content": "What is the weather in Paris?"}, TOOL_CALL, TOOL_RESULT,
                  {"role": "assistant", "content": "It is 21 °C in Paris."}],
}

# (golden name, template source, special tokens, extra kwargs variants)
SPECIAL = {
    "llama2": {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>"},
    "llama3": {"bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>"},
    "mistral": {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>"},
    "qwen": {"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>"},
    "gemma": {"bos_token": "<bos>", "eos_token": "<eos>", "pad_token": "<pad>", "unk_token": "<unk>"},
    "phi": {"bos_token": "<s>", "eos_token": "<|endoftext|>", "unk_token": "<unk>"},
    "deepseek": {"bos_token": "<｜begin▁of▁sentence｜>", "eos_token": "<｜end▁of▁sentence｜>"},
    "cohere": {"bos_token": "<BOS_TOKEN>", "eos_token": "<|END_OF_TURN_TOKEN|>"},
    "granite": {"bos_token": "<|end_of_text|>", "eos_token": "<|end_of_text|>"},
    "gpt-oss": {"eos_token": "<|return|>"},
}

TEMPLATES = [
    ("llama3-tokenizer", "shared:models/llama3-tokenizer/tokenizer_config.json", "llama3"),
    ("qwen3-tokenizer", "shared:models/qwen3-tokenizer/tokenizer_config.json", "qwen"),
    ("Llama-2-7b-chat-hf", "meta-llama-Llama-2-7b-chat-hf.jinja", "llama2"),
    ("Mistral-7B-Instruct-v0.2", "mistralai-Mistral-7B-Instruct-v0.2.jinja", "mistral"),
    ("Mistral-7B-Instruct-v0.3", "mistralai-Mistral-7B-Instruct-v0.3.jinja", "mistral"),
    ("Mistral-Nemo-Instruct-2407", "mistralai-Mistral-Nemo-Instruct-2407.jinja", "mistral"),
    ("Qwen2.5-7B-Instruct", "Qwen-Qwen2.5-7B-Instruct.jinja", "qwen"),
    ("gemma-2-2b-it", "google-gemma-2-2b-it.jinja", "gemma"),
    ("Llama-3.1-8B-Instruct", "meta-llama-Llama-3.1-8B-Instruct.jinja", "llama3"),
    ("Llama-3.2-3B-Instruct", "meta-llama-Llama-3.2-3B-Instruct.jinja", "llama3"),
    ("Phi-3.5-mini-instruct", "microsoft-Phi-3.5-mini-instruct.jinja", "phi"),
    ("DeepSeek-R1-Distill-Qwen-32B", "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja", "deepseek"),
    ("Hermes-2-Pro-Llama-3-8B-tool_use", "NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use.jinja", "llama3"),
    ("c4ai-command-r-plus-tool_use", "CohereForAI-c4ai-command-r-plus-tool_use.jinja", "cohere"),
    ("functionary-medium-v3.2", "meetkai-functionary-medium-v3.2.jinja", "llama3"),
    ("gpt-oss-120b", "openai-gpt-oss-120b.jinja", "gpt-oss"),
    ("granite-3.3-2B-Instruct", "ibm-granite-granite-3.3-2B-Instruct.jinja", "granite"),
]


def template_source(ref):
    if ref.startswith("shared:"):
        with open(os.path.join(SHARED, ref[len("shared:"):]), encoding="utf-8") as f:
            return json.load(f)["chat_template"]
    with open(os.path.join(FIXTURES, "templates", ref), encoding="utf-8") as f:
        return f.read()


def golden_cases():
    cases = []
    for name, ref, special in TEMPLATES:
        source = template_source(ref)
        for conv_name, messages in CONVERSATIONS.items():
            variants = [{}]
            if conv_name in ("single", "tool-call"):
                variants.append({"tools": TOOLS})
            if special == "qwen" and conv_name in ("single", "multi", "thinking"):
                variants.append({"enable_thinking": False})
            for kwargs in variants:
                for agp in (True, False):
                    context = {"messages": messages, "tools": None, "documents": None, "add_generation_prompt": agp}
                    context.update(SPECIAL[special])
                    context.update(kwargs)
                    suffix = "".join("-" + k for k in kwargs)
                    case = {"id": f"{name}/{conv_name}{suffix}/{int(agp)}", "template": name, "messages": messages,
                            "add_generation_prompt": agp}
                    if kwargs:
                        case["kwargs"] = kwargs
                    case.update(render(source, context))
                    cases.append(case)
    return {
        "reference": f"Jinja2 {jinja2.__version__}, environment as transformers' apply_chat_template "
                     "(scripts/make_chat_template_goldens.py)",
        "strftime_now": FIXED_NOW.isoformat(sep=" "),
        "templates": {name: {"source": ref, "special_tokens": SPECIAL[special]} for name, ref, special in TEMPLATES},
        "cases": cases,
    }


# ---------------------------------------------------------------------------------------------
# One small template per feature.

UNIT = [
    # whitespace control, trim_blocks, lstrip_blocks
    ("trim-blocks", "{% if true %}\nyes\n{% endif %}\nafter", {}),
    ("lstrip-blocks", "line\n    {% if true %}\n    inside\n    {% endif %}\nend", {}),
    ("lstrip-not-for-variables", "a\n    {{ 'x' }}\n", {}),
    ("minus-both-sides", "a   \n  {%- if true -%}  \n  b  {%- endif -%}\n  c", {}),
    ("minus-variable", "a  {{- 'b' -}}  c", {}),
    ("plus-disables-lstrip", "x\n    {%+ if true %}y{% endif %}", {}),
    ("plus-disables-trim", "{% if true +%}\nA{% endif %}", {}),
    ("comment-trim", "a\n  {# comment #}\nb\n{#- c -#}   d", {}),
    ("trailing-newline-dropped", "text\n", {}),
    ("crlf-normalised", "a\r\nb\rc", {}),
    ("raw-block", "{% raw %}{{ not evaluated }}{% endraw %}!", {}),
    ("data-braces", "{ single } and {x}", {}),
    # literals and printing
    ("print-values", "{{ none }}|{{ None }}|{{ true }}|{{ False }}|{{ 1 }}|{{ 1.5 }}|{{ 'a' }}|{{ [1, 'b', none, true] }}|{{ {'k': 'v', 'n': [1.0]} }}", {}),
    ("print-floats", "{{ 0.1 + 0.2 }} {{ 1e20 }} {{ 1e16 }} {{ 1e15 }} {{ 1/3 }} {{ 10/2 }} {{ 2.5e-05 }} {{ -0.0 }} {{ 3.0 }}", {}),
    ("repr-quotes", "{{ [\"it's\", 'say \"hi\"', 'both \\' \"', 'tab\\tnl\\n'] }}", {}),
    ("string-escapes", "{{ 'a\\nb\\tc\\\\d\\'e\\x41\\u00e9\\d' }}", {}),
    ("string-concat-adjacent", "{{ 'a' 'b' \"c\" }}", {}),
    ("undefined-prints-empty", "[{{ missing }}]", {}),
    ("context-values", "{{ n }} {{ f }} {{ b }} {{ s }} {{ l }} {{ d }}", {"n": 3, "f": 2.5, "b": True, "s": "x", "l": [1, 2], "d": {"a": None}}),
    # operators
    ("arithmetic", "{{ 7 // 2 }} {{ -7 // 2 }} {{ 7 % 3 }} {{ -7 % 3 }} {{ 7 / 2 }} {{ 2 ** 10 }} {{ 2 ** -1 }} {{ 7.5 // 2 }} {{ -7.5 % 2 }} {{ 1 + 2 * 3 - 4 }}", {}),
    ("string-ops", "{{ 'ab' * 3 }}{{ 2 * 'x' }}{{ 'a' ~ 1 ~ none ~ missing }}{{ 'a' + 'b' }}", {}),
    ("list-ops", "{{ [1, 2] + [3] }} {{ [0] * 3 }}", {}),
    ("comparisons", "{{ 1 < 2 < 3 }} {{ 3 > 2 > 2 }} {{ 'a' < 'b' }} {{ 1 == 1.0 }} {{ true == 1 }} {{ [1,2] < [1,3] }} {{ none == none }} {{ 1 != 2 }} {{ 2 >= 2 }} {{ 1 <= 0 }}", {}),
    ("in-operator", "{{ 'b' in 'abc' }} {{ 2 in [1, 2] }} {{ 'k' in {'k': 1} }} {{ 'z' not in 'abc' }} {{ 3 not in [1] }}", {}),
    ("and-or-values", "{{ 0 or 'x' }} {{ 'a' and 'b' }} {{ '' and 'b' }} {{ none or [] }} {{ not 0 }} {{ not 'a' }}", {}),
    ("conditional-expr", "{{ 'y' if true else 'n' }} {{ 'y' if false else 'n' }} [{{ 'y' if false }}]", {}),
    ("unary", "{{ -3 }} {{ - 2.5 }} {{ +4 }} {{ -(1 + 2) }}", {}),
    ("filter-precedence", "{{ 'a' + ' b '|trim + 'c' }} {{ -3|abs }}", {}),
    # access
    ("attr-falls-back-to-item", "{{ m.role }} {{ m['role'] }} {{ m.get('x', 'dflt') }} {{ m.get('role') }}", {"m": {"role": "user"}}),
    ("item-falls-back-to-attr", "{{ m['items']()|list }}", {"m": {"a": 1}}),
    ("dict-methods", "{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %} {{ d.keys()|list }} {{ d.values()|list }}", {"d": {"b": 1, "a": 2}}),
    ("indexing", "{{ l[0] }} {{ l[-1] }} {{ s[1] }} {{ s[-1] }} {{ l.1 }}", {"l": [1, 2, 3], "s": "héllo"}),
    ("slicing", "{{ l[1:] }} {{ l[:-1] }} {{ l[::-1] }} {{ l[::2] }} {{ l[-2:] }} {{ s[::-1] }} {{ s[1:3] }} {{ l[5:] }} {{ l[3:0:-1] }} {{ l[:] }}", {"l": [1, 2, 3, 4], "s": "añb😀c"}),
    ("missing-attribute-undefined", "[{{ d.nope }}] {{ d.nope is defined }} {{ d.nope is undefined }}", {"d": {}}),
    ("missing-index-undefined", "[{{ l[10] }}] {{ l[10] is defined }}", {"l": [1]}),
    # statements
    ("set", "{% set x = 1 %}{% set y = x + 1 %}{{ x }}{{ y }}{% set a, b = [3, 4] %}{{ a }}{{ b }}", {}),
    ("set-block", "{% set body %}  hello {{ 'w' }}  {% endset %}[{{ body }}]{% set up | upper %}x{% endset %}{{ up }}", {}),
    ("if-elif-else", "{% for i in [1, 2, 3] %}{% if i == 1 %}one{% elif i == 2 %}two{% else %}many{% endif %} {% endfor %}", {}),
    ("for-loop-vars", "{% for x in 'abc' %}{{ loop.index }}{{ loop.index0 }}{{ loop.revindex }}{{ loop.revindex0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }}{{ loop.previtem }}{{ loop.nextitem }}{{ loop.cycle('x', 'y') }};{% endfor %}", {}),
    ("for-else", "{% for x in [] %}{{ x }}{% else %}empty{% endfor %}{% for x in [1] %}{{ x }}{% else %}empty{% endfor %}", {}),
    ("for-filter", "{% for x in range(10) if x is odd %}{{ x }}{{ loop.length }},{% endfor %}", {}),
    ("for-dict", "{% for k in d %}{{ k }}{% endfor %}{% for k, v in d|dictsort %}{{ k }}{{ v }}{% endfor %}", {"d": {"b": 2, "a": 1}}),
    ("for-unpack", "{% for a, b in [[1, 2], [3, 4]] %}{{ a + b }}{% endfor %}", {}),
    ("for-scope", "{% set x = 5 %}{% for i in [1, 2] %}[{{ x }}]{% set x = i %}{% endfor %}{{ x }}", {}),
    ("for-scope-fresh-each-iteration", "{% for i in [1, 2] %}{% if i == 2 %}[{{ y }}]{% endif %}{% set y = i %}{% endfor %}", {}),
    ("if-does-not-scope", "{% if true %}{% set z = 3 %}{% endif %}{{ z }}", {}),
    ("nested-loops", "{% for a in [1, 2] %}{% for b in [1, 2] %}{{ loop.index }}{{ a }}{% endfor %}{{ loop.index }}|{% endfor %}", {}),
    ("break-continue", "{% for i in range(10) %}{% if i == 2 %}{% continue %}{% endif %}{% if i == 5 %}{% break %}{% endif %}{{ i }}{% endfor %}", {}),
    ("namespace", "{% set ns = namespace(count=0, found=false) %}{% for i in [1, 2, 3] %}{% set ns.count = ns.count + i %}{% if i == 2 %}{% set ns.found = true %}{% endif %}{% endfor %}{{ ns.count }} {{ ns.found }}", {}),
    ("namespace-from-dict", "{% set ns = namespace({'a': 1}, b=2) %}{{ ns.a }}{{ ns.b }}", {}),
    ("macro", "{% macro greet(name, greeting='Hello') %}{{ greeting }}, {{ name }}!{% endmacro %}{{ greet('Ann') }} {{ greet('Bob', greeting='Hi') }} {{ greet('C', 'Yo') }}", {}),
    ("macro-sees-later-globals", "{% macro m() %}{{ y }}{% endmacro %}{% set y = 3 %}{{ m() }}", {}),
    ("macro-missing-arg", "{% macro m(a, b) %}[{{ a }}][{{ b }}]{% endmacro %}{{ m(1) }}", {}),
    ("macro-recursion", "{% macro fact(n) %}{% if n <= 1 %}1{% else %}{{ n * fact(n - 1)|int }}{% endif %}{% endmacro %}{{ fact(5) }}", {}),
    ("call-block", "{% macro wrap(tag) %}<{{ tag }}>{{ caller() }}</{{ tag }}>{% endmacro %}{% call wrap('b') %}bold{% endcall %}", {}),
    ("call-block-args", "{% macro each(items) %}{% for i in items %}{{ caller(i) }}{% endfor %}{% endmacro %}{% call(x) each([1, 2]) %}<{{ x }}>{% endcall %}", {}),
    ("filter-block", "{% filter upper %}hello {{ 'world' }}{% endfilter %}", {}),
    # filters
    ("filter-trim", "[{{ '  a b \\n'|trim }}][{{ 'xxaxx'|trim('x') }}][{{ '\\u3000a\\u00a0'|trim }}]", {}),
    ("filter-case", "{{ 'hello wORLD'|upper }} {{ 'HeLLo'|lower }} {{ 'hello wORLD-x (y'|title }} {{ 'hELLO'|capitalize }}", {}),
    ("filter-length", "{{ 'héllo'|length }} {{ [1, 2]|length }} {{ {'a': 1}|count }} {{ missing|length }}", {}),
    ("filter-replace", "{{ 'aaa'|replace('a', 'b') }} {{ 'aaa'|replace('a', 'b', 2) }} {{ 'ab'|replace('', '-') }}", {}),
    ("filter-join", "{{ [1, 2, 3]|join(', ') }} {{ ['a', 'b']|join }} {{ users|join(', ', attribute='name') }}", {"users": [{"name": "x"}, {"name": "y"}]}),
    ("filter-default", "{{ missing|default('d') }} {{ ''|default('d') }} {{ ''|default('d', true) }} {{ none|d('n') }} {{ 0|d('z', boolean=true) }}", {}),
    ("filter-first-last", "{{ [1, 2, 3]|first }} {{ [1, 2, 3]|last }} {{ 'abc'|first }} {{ 'abc'|last }} [{{ []|first }}]", {}),
    ("filter-list", "{{ 'ab'|list }} {{ {'a': 1}|list }} {{ range(3)|list }}", {}),
    ("filter-map", "{{ users|map(attribute='name')|list }} {{ ['a', 'b']|map('upper')|list }} {{ users|map(attribute='age', default=0)|list }} {{ users|map(attribute='name')|join('+') }}", {"users": [{"name": "x", "age": 3}, {"name": "y"}]}),
    ("filter-select", "{{ [1, 2, 3, 4]|select('odd')|list }} {{ [1, 2, 3, 4]|reject('odd')|list }} {{ [0, 1, '', 'a']|select|list }} {{ [1, 5, 3]|select('gt', 2)|list }} {{ ['a', 'b']|select('in', ['b'])|list }}", {}),
    ("filter-selectattr", "{{ ms|selectattr('role', 'equalto', 'user')|map(attribute='c')|list }} {{ ms|rejectattr('role', 'eq', 'user')|list|length }} {{ ms|selectattr('flag')|list|length }} {{ ms|selectattr('flag', 'defined')|list|length }}", {"ms": [{"role": "user", "c": 1, "flag": True}, {"role": "bot", "c": 2}, {"role": "user", "c": 3, "flag": False}]}),
    ("filter-tojson", "{{ d|tojson }}\n{{ d|tojson(indent=2) }}\n{{ d|tojson(separators=(',', ':')) }}\n{{ d|tojson(sort_keys=true) }}\n{{ 'é<>&\\''|tojson }}\n{{ [1.0, 1e20, none, true, -3]|tojson }}\n{{ {}|tojson(indent=4) }}{{ []|tojson }}\n{{ 'é'|tojson(ensure_ascii=true) }} {{ '😀'|tojson(true) }}\n{{ 'ctl\\x01\\x1f\\t'|tojson }}", {"d": {"z": [1, {"y": "ü"}], "a": None, "n": 1.5}}),
    ("filter-string-int-float", "{{ 12|string + '3' }} {{ '42'|int + 1 }} {{ '4.7'|int }} {{ 'x'|int }} {{ 'x'|int(7) }} {{ 3.9|int }} {{ '1.5'|float }} {{ 'x'|float }} {{ 2|float }} {{ true|int }} {{ ' 12 '|int }}", {}),
    ("filter-abs-round", "{{ -3|abs }} {{ -2.5|abs }} {{ 2.5|round }} {{ 3.5|round }} {{ 2.675|round(2) }} {{ 3.14159|round(2) }} {{ 2.1|round(0, 'ceil') }} {{ 2.9|round(0, 'floor') }} {{ 7|round }}", {}),
    ("filter-items-dictsort", "{{ d|items|list }} {{ d|dictsort }} {{ d|dictsort(by='value') }} {{ d|dictsort(reverse=true) }} {{ {'b': 1, 'A': 2}|dictsort }} {{ {'b': 1, 'A': 2}|dictsort(true) }}", {"d": {"b": 2, "a": 3, "c": 1}}),
    ("filter-unique-sort", "{{ [3, 1, 2, 1]|unique|list }} {{ ['a', 'A', 'b']|unique|list }} {{ [3, 1, 2]|sort }} {{ [3, 1, 2]|sort(reverse=true) }} {{ ['b', 'A', 'c']|sort }} {{ ['b', 'A', 'c']|sort(case_sensitive=true) }} {{ us|sort(attribute='n')|map(attribute='n')|list }}", {"us": [{"n": 2}, {"n": 1}]}),
    ("filter-min-max-sum", "{{ [3, 1, 2]|min }} {{ [3, 1, 2]|max }} {{ ['b', 'A']|min }} {{ [1, 2, 3]|sum }} {{ us|sum(attribute='n') }} {{ [1.5, 2]|sum(start=1) }} {{ us|max(attribute='n') }}", {"us": [{"n": 2}, {"n": 5}]}),
    ("filter-reverse", "{{ 'abc'|reverse }} {{ [1, 2, 3]|reverse|list }}", {}),
    ("filter-indent", "[{{ 'a\\nb\\n\\nc'|indent }}]\n[{{ 'a\\nb'|indent(2, true) }}]\n[{{ 'a\\n\\nb'|indent(2, blank=true) }}]\n[{{ 'a\\nb'|indent('> ') }}]", {}),
    ("filter-escape-safe", "{{ '<a href=\"x\">&\\'</a>'|e }} {{ '<b>'|escape }} {{ '<i>'|safe }}", {}),
    ("filter-count-batch", "{{ [1, 2, 3, 4, 5]|batch(2)|list }} {{ [1, 2, 3]|batch(2, 0)|list }}", {}),
    ("filter-format", "{{ '%s is %d years'|format('Ann', 30) }} {{ '%s%%'|format(5) }}", {}),
    ("filter-center-wordcount", "[{{ 'ab'|center(7) }}] {{ 'one two, three'|wordcount }}", {}),
    ("filter-attr", "{{ d|attr('items')|string|length > 0 }}", {"d": {"a": 1}}),
    # tests
    ("tests-types", "{{ 1 is number }} {{ 1.5 is number }} {{ true is number }} {{ 1 is integer }} {{ true is integer }} {{ 1.0 is float }} {{ 's' is string }} {{ {} is mapping }} {{ [] is sequence }} {{ 's' is sequence }} {{ {} is sequence }} {{ 3 is sequence }} {{ [] is iterable }} {{ none is none }} {{ true is boolean }} {{ 1 is boolean }}", {}),
    ("tests-true-false", "{{ true is true }} {{ 1 is true }} {{ false is false }} {{ 0 is false }} {{ x is false }} {{ x is not false }}", {"x": False}),
    ("tests-defined", "{{ a is defined }} {{ b is defined }} {{ b is undefined }} {{ a is not none }} {{ n is none }} {{ n is defined }}", {"a": 1, "n": None}),
    ("tests-compare", "{{ 2 is eq 2 }} {{ 2 is equalto 3 }} {{ 2 is ne 3 }} {{ 1 is lt 2 }} {{ 3 is gt 2 }} {{ 2 is ge 2 }} {{ 2 is le 1 }} {{ 'a' is in 'abc' }} {{ 4 is divisibleby 2 }} {{ 3 is odd }} {{ 3 is even }} {{ 'ab' is lower }} {{ 'AB' is upper }} {{ none is sameas none }}", {}),
    ("tests-callable-filter-test", "{{ range is callable }} {{ 'x' is callable }} {{ 'upper' is filter }} {{ 'nope' is filter }} {{ 'odd' is test }}", {}),
    # string methods
    ("str-strip", "[{{ s.strip() }}][{{ s.lstrip() }}][{{ s.rstrip() }}][{{ 'xyax'.strip('xy') }}][{{ '\\n\\nA\\n'.lstrip('\\n') }}]", {"s": "  a b  "}),
    ("str-split", "{{ 'a,b,,c'.split(',') }} {{ ' a  b '.split() }} {{ 'a,b,c'.split(',', 1) }} {{ 'a,b,c'.rsplit(',', 1) }} {{ 'x</think>y</think>z'.split('</think>')[-1] }} {{ '  a b c  '.split(none, 1) }} {{ '  a b c  '.rsplit(none, 1) }}", {}),
    ("str-starts-ends", "{{ 'hello'.startswith('he') }} {{ 'hello'.endswith('lo') }} {{ 'hello'.startswith(('x', 'h')) }} {{ 'hello'.endswith('x') }}", {}),
    ("str-case", "{{ 'ab cd'.upper() }} {{ 'AB'.lower() }} {{ \"they're bill's 1st\".title() }} {{ 'hELLO wORLD'.capitalize() }}", {}),
    ("str-find-count-replace", "{{ 'héllo'.find('l') }} {{ 'hello'.find('z') }} {{ 'hello'.rfind('l') }} {{ 'banana'.count('an') }} {{ 'aXbX'.replace('X', '-') }} {{ 'aXbX'.replace('X', '-', 1) }}", {}),
    ("str-join-format", "{{ '-'.join(['a', 'b']) }} {{ '{} and {}'.format('x', 'y') }} {{ '{0}{0}{name}'.format('r', name='n') }}", {}),
    ("str-predicates", "{{ '123'.isdigit() }} {{ '12a'.isdigit() }} {{ 'ab'.isalpha() }} {{ '  '.isspace() }} {{ 'a1'.isalnum() }} {{ ''.isdigit() }}", {}),
    ("str-misc", "{{ 'prefix-x'.removeprefix('prefix-') }} {{ 'x.txt'.removesuffix('.txt') }} {{ 'a\\nb\\r\\nc'.splitlines() }}", {}),
    ("list-methods", "{{ [1, 2, 2].count(2) }} {{ ['a', 'b'].index('b') }}", {}),
    # globals
    ("range", "{{ range(3)|list }} {{ range(1, 4)|list }} {{ range(10, 0, -3)|list }} {{ range(0)|list }}", {}),
    ("dict-global", "{{ dict(a=1, b='x') }}", {}),
    ("strftime-now", "{{ strftime_now('%Y-%m-%d %H:%M') }} {{ strftime_now('%d %b %Y') }}", {}),
    ("raise-exception", "before{{ raise_exception('Bad role: ' ~ role) }}after", {"role": "tool"}),
    ("raise-in-loop", "{% for m in ms %}{% if m == 2 %}{{ raise_exception('two') }}{% endif %}{{ m }}{% endfor %}", {"ms": [1, 2, 3]}),
    # errors jinja2 raises at render time
    ("error-undefined-attribute", "{{ missing.attr }}", {}),
    ("error-undefined-nested", "{{ d.a.b }}", {"d": {}}),
    ("error-undefined-arith", "{{ d.a + 1 }}", {"d": {}}),
    ("error-undefined-call", "{{ nothing() }}", {}),
    ("error-type-concat", "{{ 'a' + 1 }}", {}),
    ("error-unsafe-append", "{{ l.append(1) }}", {"l": []}),
    ("error-unsafe-update", "{% set x = d.update({'a': 1}) %}", {"d": {}}),
    ("error-division-by-zero", "{{ 1 / 0 }}", {}),
    ("error-assign-non-namespace", "{% set d = {} %}{% set d.x = 1 %}", {}),
    ("error-unpack", "{% for a, b in [[1, 2, 3]] %}{% endfor %}", {}),
    ("error-compare-types", "{{ 1 < 'a' }}", {}),
    ("error-iterate-int", "{% for x in 3 %}{% endfor %}", {}),
    ("unsafe-attr-prints-empty", "[{{ l.append }}]", {"l": []}),
    # syntax errors
    ("syntax-unknown-tag", "a\n{% frobnicate %}", {}),
    ("syntax-unclosed-if", "{% if true %}open", {}),
    ("syntax-unclosed-for", "x\n  {% for i in l %}{{ i }}", {}),
    ("syntax-stray-endif", "{% endif %}", {}),
    ("syntax-unclosed-variable", "{{ 'a' ", {}),
    ("syntax-unclosed-comment", "{# never closed", {}),
    ("syntax-unknown-filter", "{{ 'a'|nosuchfilter }}", {}),
    ("syntax-unknown-test", "{{ 'a' is nosuchtest }}", {}),
    ("syntax-break-outside-loop", "{% break %}", {}),
    ("syntax-bad-expression", "{{ 1 + }}", {}),
    ("syntax-unbalanced", "{{ (1 + 2 }}", {}),
    ("syntax-extends", "{% extends 'base.html' %}", {}),
    ("syntax-do", "{% do l.append(1) %}", {}),
    ("syntax-bad-char", "{{ 1 $ 2 }}", {}),
    ("syntax-else-without-if", "{% else %}", {}),
]


def unit_cases():
    out = []
    for case_id, source, context in UNIT:
        case = {"id": case_id, "template": source, "context": context}
        case.update(render(source, context))
        out.append(case)
    return {"reference": f"Jinja2 {jinja2.__version__}, environment as transformers' apply_chat_template",
            "strftime_now": FIXED_NOW.isoformat(sep=" "), "cases": out}


def main():
    goldens = golden_cases()
    units = unit_cases()
    for name, data in (("goldens.json", goldens), ("unit_cases.json", units)):
        path = os.path.join(FIXTURES, name)
        with open(path, "w", encoding="utf-8") as f:
            json.dump(data, f, ensure_ascii=False, indent=1)
            f.write("\n")
        errors = sum(1 for c in data["cases"] if "error" in c)
        print(f"{path}: {len(data['cases'])} cases ({errors} errors)", file=sys.stderr)


if __name__ == "__main__":
    main()
