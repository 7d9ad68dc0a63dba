"""Strategies named by module path in a spec: ``[strategy.X] module = "package.module:object"``.

The object is a strategy (a :class:`~strategies.base.Strategy` or a
:class:`sim.kernel.custom.KernelStrategy`) or a callable (a class, a factory) that takes
the table's ``params`` as keyword arguments and returns one. The module must be
importable (installed, or on ``PYTHONPATH``). Its source hash is recorded with the
results, so an edited module is never mixed with results of the old one.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import re

MODULE_PATH = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


def is_module_path(text: str) -> bool:
    """``'package.module:object'``?"""
    return isinstance(text, str) and bool(MODULE_PATH.match(text))


_IMPORTED: dict[str, str] = {}  # module name -> source hash of the version imported


def _file_hash(mod) -> str:
    try:
        src = inspect.getsourcefile(mod) or mod.__file__
        with open(src, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except (TypeError, OSError) as e:
        raise ValueError(f"cannot read the source of {mod.__name__!r} to hash it: {e}") from None


def _module_and_object(path: str):
    """(module, object); a module whose file changed since it was imported here is imported again,
    so the object always comes from the source whose hash is recorded."""
    if not is_module_path(path):
        raise ValueError(f"{path!r} is not a module path like 'package.module:object'")
    mod_name, obj_name = path.split(":")
    try:
        mod = importlib.import_module(mod_name)
        h = _file_hash(mod)
        if _IMPORTED.setdefault(mod_name, h) != h:
            mod = importlib.reload(mod)
            _IMPORTED[mod_name] = h
    except ImportError as e:
        raise ValueError(f"cannot import {mod_name!r} ({e}); the module must be importable "
                         "(installed, or its folder on PYTHONPATH)") from None
    obj = mod
    for part in obj_name.split("."):
        if not hasattr(obj, part):
            raise ValueError(f"module {mod_name!r} has no {obj_name!r}")
        obj = getattr(obj, part)
    return mod, obj


_LOADED: dict[tuple, object] = {}


def load(path: str, params: dict | None = None):
    """The strategy object that ``path`` names, built with ``params`` (one object per process and
    (path, params), so a KernelStrategy compiles its pairing once, not once per batch)."""
    key = (path, repr(sorted((params or {}).items())), source_hash(path))
    if key not in _LOADED:
        _LOADED[key] = _load(path, params)
    return _LOADED[key]


def _load(path: str, params: dict | None = None):
    from sim.kernel.custom import KernelStrategy
    from strategies.base import Strategy

    _, obj = _module_and_object(path)
    params = dict(params or {})
    if isinstance(obj, (Strategy, KernelStrategy)):
        if params:
            raise ValueError(f"{path} is a strategy object: it takes no params (give a class or factory for params)")
        return obj
    if not callable(obj):
        raise ValueError(f"{path} is a {type(obj).__name__}, not a strategy, a strategy class or a factory")
    made = obj(**params)
    if not isinstance(made, (Strategy, KernelStrategy)):
        raise ValueError(f"{path}(**params) returned a {type(made).__name__}, not a Strategy or KernelStrategy")
    return made


def source_hash(path: str) -> str:
    """sha256 of the source file of the module that ``path`` names."""
    mod, _ = _module_and_object(path)
    return _IMPORTED[mod.__name__]


def kernel_playable(strategy) -> bool:
    """Whether the kernel plays ``strategy`` exactly (a built-in family object or a KernelStrategy)."""
    from sim.kernel.custom import KernelStrategy
    from sim.run import _exact_kernel_twin

    if isinstance(strategy, KernelStrategy):
        return True
    try:
        _exact_kernel_twin(strategy)
    except ValueError:
        return False
    return True
