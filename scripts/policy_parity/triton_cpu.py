"""A small CPU interpreter for the subset of Triton the Cascading KV cache's kernels use.

Triton has no Debian package and no CPU backend here, so install() registers `triton` and
`triton.language` modules that run a @triton.jit function as plain Python, one program id at a
time, with numpy arrays as Triton's blocks:
  - tensors passed to a kernel become pointers into their storage; `ptr + offsets`, tl.load
    (with mask/other) and tl.store (with mask) index that storage by element offset;
  - every number inside a kernel is a block (integer literals are rewritten into blocks when the
    function is parsed, so `i.to(tl.int64)` works on a literal as it does in Triton);
  - integer `%` truncates (C's srem, as Triton's), float `%` floors (as Triton's);
  - tl.program_id, tl.arange, tl.full, tl.sum, `.to(dtype)`, `.dtype`; launches `kernel[grid](...)`
    loop over the grid. Nothing else of Triton exists here: an unsupported call fails loudly.
"""
import ast
import inspect
import itertools
import sys
import textwrap
import types

import numpy as np
import torch

_DTYPES = {"int1": np.bool_, "int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64,
           "float16": np.float16, "float32": np.float32, "float64": np.float64}


class _Dtype:
    def __init__(self, name):
        self.name = name
        self.np = _DTYPES[name]


def _np_dtype(dtype):
    return dtype.np if isinstance(dtype, _Dtype) else np.dtype(dtype)


def _arr(x):
    return x.a if isinstance(x, Block) else np.asarray(x)


class Block:
    """A Triton value: a scalar or a block of elements."""

    __slots__ = ("a",)

    def __init__(self, a):
        self.a = np.asarray(a)

    @property
    def dtype(self):
        return self.a.dtype

    def to(self, dtype, **_):
        return Block(self.a.astype(_np_dtype(dtype)))

    def __bool__(self):
        return bool(self.a)

    def __index__(self):
        return int(self.a)

    __int__ = __index__

    def __repr__(self):
        return f"Block({self.a!r})"

    def _bin(self, other, op, reflected=False):
        if isinstance(other, Pointer):
            return NotImplemented
        a, b = (_arr(other), self.a) if reflected else (self.a, _arr(other))
        with np.errstate(all="ignore"):
            return Block(op(a, b))

    def __add__(self, o): return self._bin(o, np.add)
    def __radd__(self, o): return self._bin(o, np.add, True)
    def __sub__(self, o): return self._bin(o, np.subtract)
    def __rsub__(self, o): return self._bin(o, np.subtract, True)
    def __mul__(self, o): return self._bin(o, np.multiply)
    def __rmul__(self, o): return self._bin(o, np.multiply, True)
    def __truediv__(self, o): return self._bin(o, np.true_divide)
    def __mod__(self, o): return self._bin(o, _triton_mod)
    def __rmod__(self, o): return self._bin(o, _triton_mod, True)
    def __lt__(self, o): return self._bin(o, np.less)
    def __le__(self, o): return self._bin(o, np.less_equal)
    def __gt__(self, o): return self._bin(o, np.greater)
    def __ge__(self, o): return self._bin(o, np.greater_equal)
    def __eq__(self, o): return self._bin(o, np.equal)
    def __ne__(self, o): return self._bin(o, np.not_equal)
    def __and__(self, o): return self._bin(o, np.logical_and)
    def __or__(self, o): return self._bin(o, np.logical_or)
    def __neg__(self): return Block(-self.a)
    def __invert__(self): return Block(~self.a)
    __hash__ = None


def _triton_mod(a, b):
    a, b = np.asarray(a), np.asarray(b)
    if np.issubdtype(np.result_type(a, b), np.floating):
        return np.mod(a, b)  # floor: Triton's float %
    safe = np.where(b == 0, 1, b)
    return np.where(b == 0, 0, np.fmod(a, safe))  # truncation: Triton's (C's) signed integer %


class Pointer:
    """A pointer into a tensor's storage, plus element offsets (a scalar or a block)."""

    def __init__(self, flat, offset=0):
        self.flat, self.offset = flat, np.asarray(offset, dtype=np.int64)

    def __add__(self, offset):
        return Pointer(self.flat, self.offset + _arr(offset).astype(np.int64))

    __radd__ = __add__


def _pointer_to(tensor):
    if tensor.device.type != "cpu":
        raise ValueError("triton_cpu runs on CPU tensors only")
    elements = tensor.storage().size() - tensor.storage_offset()
    view = torch.as_strided(tensor, (elements,), (1,), tensor.storage_offset())
    return Pointer(view.numpy())


_program_id = (0, 0, 0)


class _Language(types.ModuleType):
    constexpr = object

    def __init__(self):
        super().__init__("triton.language")
        for name in _DTYPES:
            setattr(self, name, _Dtype(name))

    @staticmethod
    def program_id(axis):
        return Block(np.int32(_program_id[axis]))

    @staticmethod
    def arange(start, end):
        return Block(np.arange(int(start), int(end), dtype=np.int32))

    @staticmethod
    def full(shape, value, dtype):
        return Block(np.full(tuple(int(s) for s in shape), _arr(value), dtype=_np_dtype(dtype)))

    @staticmethod
    def sum(x, axis=None):
        return Block(_arr(x).sum(axis=axis))

    @staticmethod
    def load(pointer, mask=None, other=0):
        offsets = np.clip(pointer.offset, 0, len(pointer.flat) - 1)
        values = pointer.flat[offsets]
        if mask is None:
            return Block(values.copy())
        return Block(np.where(_arr(mask), values, np.asarray(_arr(other)).astype(values.dtype)))

    @staticmethod
    def store(pointer, value, mask=None):
        offsets = np.broadcast_to(pointer.offset, np.broadcast(pointer.offset, _arr(value)).shape)
        values = np.broadcast_to(_arr(value), offsets.shape).astype(pointer.flat.dtype)
        keep = np.ones(offsets.shape, bool) if mask is None else np.broadcast_to(_arr(mask), offsets.shape)
        if np.any(offsets[keep] < 0) or np.any(offsets[keep] >= len(pointer.flat)):
            raise IndexError("triton_cpu: store outside the tensor")
        pointer.flat[offsets[keep]] = values[keep]


class _LiteralsToBlocks(ast.NodeTransformer):
    def visit_Constant(self, node):
        if isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
            return ast.copy_location(ast.Call(ast.Name("__triton_block__", ast.Load()), [node], []), node)
        return node


def _wrap(value):
    if isinstance(value, torch.Tensor):
        return _pointer_to(value)
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
        return Block(value)
    return value


class JITFunction:
    def __init__(self, fn):
        source = textwrap.dedent(inspect.getsource(fn))
        tree = ast.parse(source)
        tree.body[0].decorator_list = []
        tree = ast.fix_missing_locations(_LiteralsToBlocks().visit(tree))
        namespace = fn.__globals__
        namespace["__triton_block__"] = Block
        exec(compile(tree, inspect.getsourcefile(fn), "exec"), namespace)  # defines the plain function
        self.fn = namespace[fn.__name__]
        namespace[fn.__name__] = self
        self.__name__ = fn.__name__

    def __call__(self, *args, **kwargs):
        return self.fn(*[_wrap(a) for a in args], **{k: _wrap(v) for k, v in kwargs.items()})

    def __getitem__(self, grid):
        def launch(*args, num_warps=None, num_stages=None, **kwargs):
            global _program_id
            ranges = [range(int(g)) for g in tuple(grid) + (1,) * (3 - len(grid))]
            for pid in itertools.product(*ranges):
                _program_id = pid
                self(*args, **kwargs)
        return launch


def install():
    triton = types.ModuleType("triton")
    language = _Language()
    triton.language = language
    triton.jit = JITFunction
    triton.next_power_of_2 = lambda n: 1 << (int(n) - 1).bit_length()
    sys.modules["triton"] = triton
    sys.modules["triton.language"] = language
