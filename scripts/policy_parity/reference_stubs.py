"""Stand-ins for the imports the reference code needs but the parity scripts never exercise.

install_transformers_stub() registers a tiny `transformers` whose names are empty classes, except
the two helpers the references really call: `repeat_kv` (K/V heads repeated to the query heads,
each KV head's copies consecutive, as transformers' Llama does) and `rotate_half`. `logging`
returns the standard library's loggers.
"""
import logging as std_logging
import sys
import types

import torch


class _StubModule(types.ModuleType):
    """Any attribute not set explicitly is an empty class of that name."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        cls = type(name, (object,), {"__init__": lambda self, *a, **k: None})
        setattr(self, name, cls)
        return cls


def _repeat_kv(hidden_states, n_rep):
    b, kvh, n, d = hidden_states.shape
    if n_rep == 1:
        return hidden_states
    return hidden_states[:, :, None, :, :].expand(b, kvh, n_rep, n, d).reshape(b, kvh * n_rep, n, d)


def _rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def _register(name, **attrs):
    module = _StubModule(name)
    module.__path__ = []  # a package, so that submodules can be imported from it
    for key, value in attrs.items():
        setattr(module, key, value)
    sys.modules[name] = module
    return module


def install_transformers_stub():
    for name in ("transformers", "transformers.generation", "transformers.generation.utils",
                 "transformers.generation.logits_process", "transformers.generation.stopping_criteria",
                 "transformers.generation.configuration_utils", "transformers.generation.streamers",
                 "transformers.cache_utils", "transformers.models", "transformers.models.llama",
                 "transformers.models.qwen2", "transformers.models.qwen2.modeling_qwen2",
                 "transformers.models.mistral", "transformers.models.mistral.modeling_mistral"):
        _register(name)
    _register("transformers.models.llama.modeling_llama", repeat_kv=_repeat_kv, rotate_half=_rotate_half)
    _register("transformers.utils", logging=types.SimpleNamespace(get_logger=std_logging.getLogger))
    _register("flash_attn")


def register_empty_package(name, **attrs):
    """A package that exists only so that a reference file can be loaded under its dotted name."""
    return _register(name, **attrs)
