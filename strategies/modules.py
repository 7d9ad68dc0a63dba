"""Strategies named by module path in a spec: ``[strategy.X] module = "package.module:object"``.

The object is a strategy (a :class:`~strategies.base.Strategy` or a
:class:`sim.kernel.custom.KernelStrategy`) or a callable (a class, a factory) that takes
the table's ``params`` as keyword arguments and returns one. The module must be
importable (installed, or on ``PYTHONPATH``). The hash of its source is recorded
with the results, so an edited module is never mixed with results of the old one:
the source is every Python file of the module's top-level package, or, for a
module outside any package, every Python file in its folder and below, so that
an edit of a helper module it imports counts too (:func:`source_files`). Keep a
strategy's own code there: an import from elsewhere is not tracked.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import os
import re
import sys
from pathlib import Path

MODULE_PATH = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


def is_module_path(text: str) -> bool:
    """``'package.module:object'``?"""
    return isinstance(text, str) and bool(MODULE_PATH.match(text))


_IMPORTED: dict[str, str] = {}  # module name -> source hash of the version imported
MAX_SOURCE_FILES = 500
# folders never part of a strategy's source: caches, environments, and the simulator's own packages
# (their source is in the resume key already, and their modules are never imported again)
_SKIP_DIRS = ("__pycache__", "site-packages", "node_modules")
_OWN_PACKAGES = ("sim", "strategies")


def source_root(mod) -> Path:
    """The folder whose Python files make up ``mod``'s source: its top-level package's, or its own."""
    top = sys.modules.get(mod.__name__.split(".")[0], mod)
    try:
        src = inspect.getsourcefile(top) or top.__file__
    except TypeError:
        src = None
    if src is None:
        raise ValueError(f"cannot read the source of {mod.__name__!r} to hash it (a built-in or a namespace "
                         "package); put the strategy in a module file") from None
    return Path(src).resolve().parent


def source_files(mod) -> list[Path]:
    """The Python files of ``mod``'s source (:func:`source_root` and below), sorted; hidden folders,
    caches, virtual environments and the simulator's own packages left out."""
    root = source_root(mod)
    if root.name in ("site-packages", "dist-packages"):  # an installed single-file module: that file alone
        return [Path(inspect.getsourcefile(mod) or mod.__file__).resolve()]
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        dirnames[:] = sorted(d for d in dirnames if not (
            d.startswith(".") or d in _SKIP_DIRS or (here / d / "pyvenv.cfg").exists()
            or (d in _OWN_PACKAGES and (here / d / "__init__.py").exists())))
        out += [here / f for f in filenames if f.endswith(".py")]
        if len(out) > MAX_SOURCE_FILES:
            raise ValueError(
                f"{mod.__name__!r}: the folder {root} holds more than {MAX_SOURCE_FILES} Python files; the results "
                "record the source of every Python file of a module strategy's package (or, outside a package, "
                "of its folder and below), so put the strategy in a package or folder of its own")
    return sorted(out, key=lambda f: f.relative_to(root).as_posix())


def _source_hash(mod) -> str:
    root = source_root(mod)
    h = hashlib.sha256()
    for f in source_files(mod):
        try:
            data = f.read_bytes()
        except OSError as e:
            raise ValueError(f"cannot read {f} to hash the source of {mod.__name__!r}: {e.strerror}") from None
        h.update(f.relative_to(root).as_posix().encode() + b"\0" + data + b"\0")
    return h.hexdigest()


def _forget(root: Path) -> None:
    """Drop every imported module whose file lies under ``root`` (not the simulator's own), so that the
    next import reads them all again: a helper module edited since must not be kept."""
    for name, m in list(sys.modules.items()):
        if name.split(".")[0] in _OWN_PACKAGES:
            continue
        f = getattr(m, "__file__", None)
        if f and Path(f).resolve().is_relative_to(root):
            del sys.modules[name]


def _module_and_object(path: str):
    """(module, object); a module whose file changed since it was imported here is imported again,
    so the object always comes from the source whose hash is recorded."""
    if not is_module_path(path):
        raise ValueError(f"{path!r} is not a module path like 'package.module:object'")
    mod_name, obj_name = path.split(":")
    try:
        mod = importlib.import_module(mod_name)
        h = _source_hash(mod)
        if _IMPORTED.setdefault(mod_name, h) != h:
            _forget(source_root(mod))
            importlib.invalidate_caches()
            mod = importlib.import_module(mod_name)
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
    mod, obj = _module_and_object(path)  # imported afresh if its source changed; its hash in _IMPORTED
    key = (path, repr(sorted((params or {}).items())), _IMPORTED[mod.__name__])
    if key not in _LOADED:
        _LOADED[key] = _load(path, obj, params)
    return _LOADED[key]


def _load(path: str, obj, params: dict | None = None):
    from sim.kernel.custom import KernelStrategy
    from strategies.base import Strategy

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
    """sha256 of the source of the module that ``path`` names (:func:`source_files`)."""
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
