"""Strategies named by module path in a spec: ``[strategy.X] module = "package.module:object"``.

The object is a strategy (a :class:`~strategies.base.Strategy` or a
:class:`sim.kernel.custom.KernelStrategy`) or a callable (a class, a factory) that takes
the table's ``params`` as keyword arguments and returns one. The module must be
importable (installed, or on ``PYTHONPATH``). The hash of its source is recorded
with the results, so an edited module is never mixed with results of the old one:
the source is every Python file of the module's top-level package, or, for a
module outside any package, every Python file in its folder and below, so that
an edit of a helper module it imports counts too (:func:`source_files`; a folder
linked into it counts as well, the simulator's own packages never). Keep a
strategy's own code there: an import from elsewhere is not tracked, nor is a data
file it reads (put such values in the Python source, or in ``[strategy.X] params``);
``strategies/tuned.toml``, which a module may build ``tuned`` from, is in the key.

A run plays the source whose hash it records: the first time a process loads a
module path, every module of that source that the process imported before (a
notebook's ``import my_strats``, say, perhaps of a version edited since) is
imported again, since nothing tells which version of the file it was read
from; and a source edited since it was loaded here is imported again too. Once loaded, the source's
modules and their classes are watched: a name bound, rebound or removed, or a container changed in place, in
this process since the import (a notebook's ``my_strats.LIMIT = 3``) is refused (:class:`ModuleChanged`),
since the run would play the change under the files' hash.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
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
# a module strategy's source (its files) -> hash of the version every module of it in sys.modules was
# imported from here, by this module
_TRUSTED: dict[tuple[Path, ...], str] = {}
_MAIN_NAMES = ("__main__", "__mp_main__")  # a script's own module: never imported again
MAX_SOURCE_FILES = 500
# folders never part of a strategy's source: caches, environments, and the simulator's own packages
# (their source is in the resume key already, and their modules are never imported again)
_SKIP_DIRS = ("__pycache__", "site-packages", "node_modules")
_OWN_PACKAGES = ("sim", "strategies")


@functools.cache
def _own_folders() -> frozenset[Path]:
    """The simulator's own packages' folders (``sim``, ``strategies``), by their real path: never part of a module
    strategy's source, though a strategy's own subpackage may bear one of their names."""
    return frozenset(Path(importlib.import_module(name).__file__).resolve().parent for name in _OWN_PACKAGES)


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
    seen = {root.resolve()}  # folders walked, by their real path: a linked folder is walked once
    for dirpath, dirnames, filenames in os.walk(root, followlinks=True):  # a linked helper folder is source too
        here = Path(dirpath)
        keep = []
        for d in sorted(dirnames):
            real = (here / d).resolve()
            if d.startswith(".") or d in _SKIP_DIRS or (here / d / "pyvenv.cfg").exists() or real in _own_folders() \
                    or real in seen:
                continue
            seen.add(real)
            keep.append(d)
        dirnames[:] = keep
        out += [here / f for f in filenames if f.endswith(".py")]
        if len(out) > MAX_SOURCE_FILES:
            raise ValueError(
                f"{mod.__name__!r}: the folder {root} holds more than {MAX_SOURCE_FILES} Python files; the results "
                "record the source of every Python file of a module strategy's package (or, outside a package, "
                "of its folder and below), so put the strategy in a package or folder of its own")
    return sorted(out, key=lambda f: f.relative_to(root).as_posix())


def _source_hash(mod, files: list[Path] | None = None) -> str:
    root = source_root(mod)
    h = hashlib.sha256()
    for f in source_files(mod) if files is None else files:
        try:
            data = f.read_bytes()
        except OSError as e:
            raise ValueError(f"cannot read {f} to hash the source of {mod.__name__!r}: {e.strerror}") from None
        h.update(f.relative_to(root).as_posix().encode() + b"\0" + data + b"\0")
    return h.hexdigest()


def _file_of(m) -> Path | None:
    f = getattr(m, "__file__", None)
    try:
        return Path(f).resolve() if isinstance(f, str) else None
    except OSError:
        return None


def _of_source(name: str, m, root: Path, files: set[Path]) -> bool:
    """Whether module ``m`` (as ``name`` in sys.modules) is of a module strategy's source: one of its ``files``
    (resolved), or a Python file under its ``root`` deleted since it was imported. The simulator's own modules
    and a script's ``__main__`` never are."""
    if name.split(".")[0] in _OWN_PACKAGES or name in _MAIN_NAMES or (f := _file_of(m)) is None:
        return False
    if f in files:
        return True
    return (f.suffix == ".py" and root.name not in ("site-packages", "dist-packages") and f.is_relative_to(root)
            and not f.exists()
            and not any(p.startswith(".") or p in _SKIP_DIRS for p in f.relative_to(root).parts[:-1]))


def _forget(root: Path, files: set[Path]) -> None:
    """Drop every imported module of a module strategy's source (:func:`_of_source`), so that the next import
    reads them all again: a helper module edited since must not be kept, nor one deleted since."""
    for name, m in list(sys.modules.items()):
        if _of_source(name, m, root, files):
            del sys.modules[name]


class _SourceLoader(importlib.machinery.SourceFileLoader):
    """Compiles the Python file itself, never its cached bytecode (see :class:`_StrategySources`)."""

    def get_code(self, fullname):
        return self.source_to_code(self.get_data(self.path), self.path)


class _StrategySources(importlib.abc.MetaPathFinder):
    """Finds the modules of the module strategies' sources (the files under a root :func:`source_files` walks) with
    :class:`_SourceLoader`, so that they are compiled from the files whose hash is recorded. Python trusts a cached
    ``.pyc`` whose source has the same mtime (in whole seconds) and size, so a strategy file rewritten within the
    second at the same size (``TH = 3`` made ``TH = 5`` by a script) would play its old code under the new hash.
    Every other module (installed packages, the simulator's own) keeps its cache."""

    def __init__(self):
        self.roots: frozenset[Path] = frozenset()  # replaced whole, never changed in place: read by any thread

    def add(self, root: Path) -> None:
        self.roots = self.roots | {root}

    def find_spec(self, name, path, target=None):
        if not self.roots:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or type(spec.loader) is not importlib.machinery.SourceFileLoader:
            return None
        origin = Path(spec.origin).resolve()
        if not any(_in_source(origin, root) for root in self.roots):
            return None
        spec.loader = _SourceLoader(spec.loader.name, spec.loader.path)
        return spec


def _in_source(f: Path, root: Path) -> bool:
    """Whether the file ``f`` (resolved) is one :func:`source_files` would list under ``root``."""
    if not f.is_relative_to(root) or any(f.is_relative_to(own) for own in _own_folders()):
        return False
    return not any(p.startswith(".") or p in _SKIP_DIRS for p in f.relative_to(root).parts[:-1])


_SOURCES = _StrategySources()


def _import(mod_name: str):
    """Import ``mod_name``, the modules of its source compiled from their files (:class:`_StrategySources`)."""
    spec = importlib.util.find_spec(mod_name.split(".")[0])  # its top-level package or module: the root
    if spec is not None and spec.origin and spec.has_location:
        root = Path(spec.origin).resolve().parent
        if root.name not in ("site-packages", "dist-packages"):  # an installed module keeps its cache
            if _SOURCES not in sys.meta_path:
                sys.meta_path.insert(0, _SOURCES)
            _SOURCES.add(root)
    return importlib.import_module(mod_name)


_AS_IMPORTED: dict[tuple[Path, ...], dict[str, dict]] = {}  # a trusted source -> {its module or class: a snapshot}


class ModuleChanged(ValueError):
    """A module strategy's modules or classes were changed in this process since they were imported from its files."""


def _namespaces(root: Path, files: set[Path]) -> dict[str, object]:
    """Each imported module of a module strategy's source (:func:`_of_source`), each class one of them defines and
    each strategy object one of them holds (``brave = Brave(limit=3)``: its attributes), by name, with its
    namespace as it is now."""
    from strategies.base import Strategy

    out = {}
    for name, m in list(sys.modules.items()):
        if _of_source(name, m, root, files):
            out[name] = vars(m)
            for k, v in list(vars(m).items()):
                if isinstance(v, type) and v.__module__ == name:  # its _sunder_ names are an enum's own caches
                    out[f"{name}.{v.__qualname__}"] = {a: x for a, x in vars(v).items()
                                                        if not (a[:1] == "_" and a[1:2] != "_" and a.endswith("_"))}
                elif isinstance(v, Strategy) and hasattr(v, "__dict__"):
                    out[f"{name}.{k}"] = vars(v)
    return out


def _changed_since_import(key: tuple[Path, ...], root: Path, files: set[Path]) -> list[str]:
    """What of a trusted source's modules and classes was bound, rebound, removed or changed in place since it was
    imported here (``["my_strats.TH", "my_strats.Wary.token"]``). A module or class seen for the first time (the
    source just imported, or a helper its code imported since) is taken as it is now."""
    from strategies import _changed, _snapshot

    seen = _AS_IMPORTED.setdefault(key, {})
    out = []
    for name, namespace in _namespaces(root, files).items():
        if name in seen:
            out += [f"{name}.{k}" for k in _changed(namespace, seen[name])]
        else:
            seen[name] = _snapshot(namespace)
    return out


def _module_and_object(path: str):
    """(module, object), the module imported from the source whose hash is recorded: on this process's first
    load of that source, every module of it imported before (by a notebook, say, from a version that may have
    been edited since: nothing tells which) is imported again; so is the source edited since it was loaded here."""
    if not is_module_path(path):
        raise ValueError(f"{path!r} is not a module path like 'package.module:object'")
    mod_name, obj_name = path.split(":")
    try:
        before = dict(sys.modules)
        mod = _import(mod_name)
        root = source_root(mod)
        files = source_files(mod)
        h = _source_hash(mod, files)
        resolved = {f.resolve() for f in files}
        if _TRUSTED.get(tuple(files)) != h:
            # loaded here before from another version of the source, or imported before by someone else
            if tuple(files) in _TRUSTED or any(_of_source(n, m, root, resolved) for n, m in before.items()):
                _forget(root, resolved)
                importlib.invalidate_caches()
                mod = _import(mod_name)
                if source_root(mod) != root:
                    raise ValueError(
                        f"{mod_name!r} was imported in this process from {root}, but imported again it comes "
                        f"from {source_root(mod)}: restart the Python process (or the notebook's kernel) so "
                        "that one source is played and recorded")
                files = source_files(mod)
                resolved = {f.resolve() for f in files}
                h = _source_hash(mod, files)
            _TRUSTED[tuple(files)] = h
            _AS_IMPORTED[tuple(files)] = {}
        changed = _changed_since_import(tuple(files), root, resolved)
        if changed:
            shown = ", ".join(changed[:5]) + (f" and {len(changed) - 5} more" if len(changed) > 5 else "")
            raise ModuleChanged(
                f"module strategy {path}: {shown} changed in this process since it was imported from its files (by "
                "code run here, a notebook cell say, or by the strategy's own code as it played); a run plays the "
                "files and records their hash, so put the change in the source (or in the table's params), or "
                "start a new process (restart the notebook's kernel)")
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


class SourceChanged(ValueError):
    """A module strategy's source is no longer the one a run recorded (edited while it ran)."""


def load(path: str, params: dict | None = None, source_hash: str | None = None):
    """The strategy object that ``path`` names, built with ``params`` (one object per process and
    (path, params), so a KernelStrategy compiles its pairing once, not once per batch).
    ``source_hash``: the hash of the source it must come from (:class:`SourceChanged` if it does not)."""
    mod, obj = _module_and_object(path)  # imported afresh if its source changed; its hash in _IMPORTED
    if source_hash is not None and _IMPORTED[mod.__name__] != source_hash:
        raise SourceChanged(f"the source of module strategy {path} was edited since the run began (its hash was "
                            f"{source_hash[:12]}, it is {_IMPORTED[mod.__name__][:12]})")
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
