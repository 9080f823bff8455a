"""Shared by the reasoning recorders: loading one file of a reference checkout as a module."""
import importlib.util
import sys


def load_module(name, path):
    """Executes the Python file at `path` as module `name` (registered in sys.modules first, so its
    own relative lookups and dataclasses resolve) and returns it."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
