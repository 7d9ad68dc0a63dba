"""Your own ``@njit`` decision functions in the kernel, reading only the player's view.

A :class:`KernelStrategy` starts from a built-in strategy (its id and parameter
vector) and replaces some of its decisions with numba functions you write. Each
replacement takes the player's view first, then the decision's options, the
arguments of the built-in decision of the same name (:data:`SIGNATURES`), for
example ``token(view, choices, n) -> int``. The view
(:mod:`sim.kernel.view`) has the same attributes as the readable engine's
``PlayerView``: ``view.lobo``, ``view.resolve(view.seat)``, ``view.random_below(n)``...
and nothing else: the game's hidden state is out of reach. ``view.base_<decision>(...)``
is the base strategy's own answer, called with the decision's options
(``view.base_token(choices, n)``) or with none (``view.base_rest()``). An index out of
its range (``view.resolve(-1)``) stops the run with the readable engine's
:class:`~sim.rules.errors.StrategyError`, in its words, naming the strategy. Example::

    from numba import njit
    import sim
    from sim.kernel.custom import KernelStrategy

    @njit
    def token(view, choices, n):
        return 0  # choices[0] is always "ignore the tokens": never pool, exchange or fight

    shy = KernelStrategy("heuristic", token=token, name="token_shy")
    games = sim.simulate(players=4, games=100_000, strategy=shy)

The kernel functions that reach a replaced decision are compiled again for the
pairing, with fresh copies of your functions (numba freezes the globals a function
reads when it first compiles it: a copy compiles with the values of the moment),
and the result is cached on disk, keyed by :func:`pairing_key`: the kernel's
sources and the decisions' code, options, defaults and everything they read: a
second process loads it in about a second. Code that numba keeps where the key
cannot read it (``@overload``, ``@intrinsic``, ``@jitclass``, ``@lower_builtin``,
``typeof_impl.register``...) is refused.
Randomness must come from ``view.random_below(n)`` (the game's
strategy stream) so that games stay reproducible. :func:`check_twin` compares a
kernel strategy with its readable twin, decision by decision.

Each answer is checked as the readable engine checks a Python strategy's: an index
among the ``n`` options (``reroll``: a rolled die or -1), a Python or numpy integer
alike, ``True`` or ``False`` where it asks for exactly that (``use_auto_pass``,
``status_top_secret``, a gamble's ``spend``), ``k`` different henchmen written to
``out[:k]`` by ``setup_level2_henchmen``. An illegal answer stops the run, never
played, with the readable engine's :class:`~sim.rules.errors.StrategyError` (a
``ValueError``) naming the strategy, the decision and the answer. ``out`` is an int64
array, into which numba would silently store a float as its integer part and ``True``
or ``False`` as 1 or 0: a decision that writes a float, a complex number or a bool
into it (itself, or in an ``@njit`` helper it hands the array to) is refused when the
pairing is compiled, before any game, by the same error naming the function and the
line (``wrote a float64 into out``). The options a decision is handed (``choices``,
``moves``, ``dice``...) are the kernel's own arrays, cut to their count (``len(choices)
== n``), which it plays on from after the answer: they are read only, and a decision
that writes into one at all is refused so too (``wrote into choices (...), which it
may only read``). A base call counting past them (``view.base_token(choices, n + 5)``)
is refused.
"""

from __future__ import annotations

import enum
import functools
import hashlib
import importlib
import inspect
import os
import re
import sys
import types

import numpy as np
from numba import types as nbtypes
from numba.core.caching import CompileResultCacheImpl, FunctionCache, _CacheLocator
from numba.core.imputils import impl_ret_borrowed
from numba.core.registry import CPUDispatcher
from numba.extending import intrinsic, overload

from sim._cache import HASHED_MODULES
from sim.content.constants import RESOLVE_EXCHANGE
from sim.jit import KERNEL_OPTIONS, njit
from sim.rules.errors import is_index, is_integer

KERNEL_MODULES = ("decks", "villain", "endgame", "setup", "skill_tests", "gamble", "movement", "missions",
                  "encounters", "game")
DECISIONS = (
    "setup_level2_henchmen", "setup_extras", "setup_advanced_skill", "rest", "move", "token", "use_auto_pass",
    "test_option", "draw_die", "resolve_plus_one", "reroll", "gamble_exchange", "mission_reward", "skill_up",
    "advanced_skill", "play_auto_pass", "play_two_dice", "cancel_advance", "heal_all", "intel_to_pool", "use_watch",
    "skill_down", "status_top_secret",
)


def _builtin_arguments(name: str) -> tuple[str, ...]:
    """The built-in decision's arguments after ``(ctx, seat)`` (``setup_level2_henchmen``: after ``ctx``)."""
    strategy_module = importlib.import_module("sim.kernel.strategy")
    f = getattr(strategy_module, name)
    params = list(inspect.signature(getattr(f, "py_func", f)).parameters)
    return tuple(params[1:] if name == "setup_level2_henchmen" else params[2:])


# decision -> your function's arguments after ``view`` (the options, as the kernel passes them)
SIGNATURES = {name: _builtin_arguments(name) for name in DECISIONS}

# The option arrays a decision is handed, and the argument counting them. The kernel keeps its
# options in scratch regions longer than the count; a decision is handed exactly ``array[:count]``,
# so ``len(choices) == n`` and ``for c in choices`` sees the options and nothing stale (the readable
# engine hands lists of exactly the options too). decision -> (the count's position, the arrays' positions)
_OPTION_ARRAYS = frozenset({"choices", "moves", "skills", "opts", "dice", "faces", "out"})
OPTION_COUNTS = {
    name: (args.index(count), tuple(i for i, a in enumerate(args) if a in _OPTION_ARRAYS))
    for name, args in SIGNATURES.items()
    for count in ("n", "k") if count in args and any(a in _OPTION_ARRAYS for a in args)
}


def _handed(name: str) -> list[str]:
    """The source of each argument a decision is handed: an option array cut to its count."""
    args = SIGNATURES[name]
    where, arrays = OPTION_COUNTS.get(name, (None, ()))
    return [f"{x}[:{args[where]}]" if i in arrays else x for i, x in enumerate(args)]


def _names(code) -> set[str]:
    """Global names a code object (and the functions nested in it) refers to."""
    out = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            out |= _names(const)
    return out


# --- what a compiled pairing depends on: its fingerprint --------------------------------------
# Installed libraries are hashed by name and version, not by content: numba's own cache index
# holds its version, and their values do not change under a running process.
_LIBRARIES = frozenset({"numba", "numpy", "llvmlite", *sys.stdlib_module_names})


def _kernel_source(module: str | None) -> bool:
    """Whether ``module`` is part of the kernel's sources (hashed by :func:`sim._cache.sources_hash`)."""
    return bool(module) and (module.startswith(HASHED_MODULES) or module == "sim.kernel")


def _library(module: str | None) -> bool:
    """Whether ``module`` belongs to numba, numpy, llvmlite or Python's standard library."""
    return bool(module) and module.partition(".")[0] in _LIBRARIES


@functools.cache
def _site_roots() -> tuple[str, ...]:
    """Python's site-packages folders, resolved (each ending in a separator)."""
    import site
    import sysconfig

    roots = {sysconfig.get_paths()[k] for k in ("purelib", "platlib")} | set(site.getsitepackages())
    return tuple(os.path.realpath(r) + os.sep for r in roots)


def _installed(module: str | None) -> bool:
    """Whether ``module`` comes from a package installed into Python's site-packages (pandas, a numba
    extension...), not from your own code: such code changes only with its package's version."""
    top = sys.modules.get(module.partition(".")[0]) if isinstance(module, str) else None
    path = getattr(top, "__file__", None)
    return bool(path) and os.path.realpath(path).startswith(_site_roots())


def _library_version(module: str) -> str:
    """The version of ``module``'s package (Python's for the standard library)."""
    top = sys.modules.get(module.partition(".")[0])
    return str(getattr(top, "__version__", None) or sys.version)


def _hash_code(code, h) -> None:
    """Hash a code object: bytecode, names and constants, nested code included."""
    h.update(code.co_code)
    h.update(repr(code.co_names).encode())
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            _hash_code(const, h)
        else:
            h.update(repr(const).encode())


def _fingerprint(obj, h, seen: set, attrs: set | None = None) -> None:
    """Hash ``obj`` as compiled code sees it: a function's code, and what its globals hold.

    numba freezes the globals a function reads when it compiles, so their values (and the
    code of the functions they name, recursively) are part of what a cached pairing is.
    Code that numba keeps where this cannot read it (an ``@overload``, an ``@overload_method``,
    an ``@intrinsic``, a ``@jitclass``...) is refused: a ``ValueError`` names it. ``seen`` also
    collects the modules of your code and the names it reads, for :func:`_refuse_registered`.
    """
    _walked(type(obj).__module__, seen)  # an object of your class: its module may register its type
    if isinstance(obj, CPUDispatcher):  # its options (error_model, fastmath, ...) change the code too
        h.update(f"J{type(obj).__module__}.{type(obj).__qualname__}".encode())
        for name, value in sorted({**obj.targetoptions, "locals": obj.locals}.items()):
            h.update(b"O" + name.encode())
            _fingerprint(value, h, seen)
        _fingerprint(getattr(getattr(obj, "_compiler", None), "pipeline_class", None), h, seen)
        _fingerprint_function(obj.py_func, h, seen)
    elif _made_by_numba(obj):
        raise _unreadable(obj, _NUMBA_KINDS.get(type(obj).__name__, f"a numba {type(obj).__name__}"))
    elif isinstance(obj, types.FunctionType):
        if not _outside(obj.__module__) and _numba_typed(obj):
            raise _unreadable(obj, "an @overload stub, a @register_jitable function or a function typed by "
                                   "@infer_global")
        _fingerprint_function(obj, h, seen)
    elif isinstance(obj, types.ModuleType):
        h.update(b"M" + obj.__name__.encode())
        if _kernel_source(obj.__name__):
            return  # their source is part of sim._cache.sources_hash()
        if _library(obj.__name__):
            h.update(_library_version(obj.__name__).encode())
            return
        _walked(obj.__name__, seen)
        # module.NAME as the code reads it, and module.sub.NAME: a submodule is read with the same names
        for name in sorted(attrs or ()):
            if name in vars(obj):
                h.update(b"A" + name.encode())
                if (id(obj), name) in seen:  # hashed already (and cycles: pkg.sub.pkg)
                    continue
                seen.add((id(obj), name))
                _fingerprint(vars(obj)[name], h, seen, attrs)
    elif isinstance(obj, enum.Enum):  # before the numbers: an IntEnum member is an int
        h.update(f"E{type(obj).__module__}.{type(obj).__qualname__}.{obj.name}".encode())
        _fingerprint(obj.value, h, seen)
    elif isinstance(obj, type):
        _fingerprint_class(obj, h, seen)
    elif isinstance(obj, np.ndarray):
        h.update(f"{obj.dtype}{obj.shape}".encode())
        h.update(np.ascontiguousarray(obj).tobytes())
    elif isinstance(obj, (int, float, complex, str, bytes, bool, type(None))):
        h.update(repr(obj).encode())
    elif isinstance(obj, (tuple, list)):
        h.update(b"T" + repr(getattr(obj, "_fields", None)).encode())  # a namedtuple's field names
        for x in obj:
            _fingerprint(x, h, seen)
    elif isinstance(obj, (set, frozenset)):  # fastmath={"nsz", ...}: in an order that holds across processes
        h.update(b"S" + repr(sorted(map(repr, obj))).encode())
    elif isinstance(obj, dict):
        h.update(b"Y")
        for k in sorted(obj, key=repr):
            _fingerprint(k, h, seen)
            _fingerprint(obj[k], h, seen)
    else:  # a numba type, ...: its qualified name and repr
        h.update(f"{type(obj).__module__}.{type(obj).__qualname__}:{obj!r}".encode())


def _fingerprint_function(f: types.FunctionType, h, seen: set) -> None:
    """Hash a Python function: its code, defaults and closure, and the globals it reads."""
    h.update(f"F{f.__module__}.{f.__qualname__}".encode())
    if _outside(f.__module__) or id(f) in seen:
        return
    seen.add(id(f))
    _walked(f.__module__, seen)
    _hash_code(f.__code__, h)
    h.update(b"D")  # default arguments: numba compiles an omitted argument's default in
    _fingerprint(f.__defaults__, h, seen)
    for name, value in sorted((f.__kwdefaults__ or {}).items()):
        h.update(b"K" + name.encode())
        _fingerprint(value, h, seen)
    for cell in f.__closure__ or ():
        try:
            value = cell.cell_contents
        except ValueError:  # an empty cell: a name the function binds later
            h.update(b"empty cell")
            continue
        _fingerprint(value, h, seen)
    names = _names(f.__code__)
    seen.update(("name", name) for name in names)
    for name in sorted(names):
        if name in f.__globals__:
            h.update(b"G" + name.encode())
            _fingerprint(f.__globals__[name], h, seen, names)


# numba's compiled objects other than a dispatcher: what the refusal calls them
_NUMBA_KINDS = {"_Intrinsic": "an @intrinsic", "DUFunc": "a @vectorize function", "GUFunc": "a @guvectorize function",
                "CFunc": "a @cfunc", "JitClassType": "a @jitclass"}


def _outside(module: str | None) -> bool:
    """Whether ``module`` is hashed otherwise: the kernel's sources, or an installed library's version."""
    return _kernel_source(module) or _library(module)


def _made_by_numba(obj) -> bool:
    """Whether ``obj`` is code numba compiles from yours but not a dispatcher (@intrinsic, @jitclass, ...)."""
    if not type(obj).__module__.startswith("numba.") or isinstance(obj, nbtypes.Type):
        return False
    origins = [getattr(obj, "__module__", None)]
    for attr in ("py_func", "_pyfunc", "_defn", "__wrapped__"):
        f = getattr(obj, attr, None)
        if isinstance(f, types.FunctionType):
            origins.append(f.__module__)
    return any(isinstance(m, str) and not _outside(m) for m in origins)


def _numba_typed(f: types.FunctionType) -> bool:
    """Whether numba types plain function ``f`` itself: an ``@overload`` stub or a ``@register_jitable``."""
    from numba.core.registry import cpu_target

    context = cpu_target.typing_context
    context.refresh()  # the registrations made since the last compile
    try:
        return isinstance(context.resolve_value_type(f), nbtypes.Function)
    except ValueError:  # numba cannot call it: nothing compiled to miss
        return False


def _yours(f) -> bool:
    """Whether ``f`` is a function of your code (not the kernel's, nor an installed library's)."""
    return isinstance(f, types.FunctionType) and not _outside(f.__module__)


def _walked(module, seen: set) -> None:
    """Note in ``seen`` that the key's walk met code of your ``module`` (for :func:`_refuse_registered`)."""
    if isinstance(module, str) and not _outside(module):
        seen.add(("module", module))


def _refuse_registered(seen: set) -> list[str]:
    """Refuse what your code registered with numba, which finds it in its registries (by a function, a
    type, an attribute's name), never through the globals the key follows: whatever a module of yours
    that the key's walk (``seen``) met registered (typing templates of ``@infer``, ``@infer_getattr``,
    ``@infer_global`` or ``@type_callable``, a ``@lower_builtin``, ``@lower_getattr``, ``@lower_cast``
    or ``@lower_constant``, a ``typeof_impl.register``, ``register_model``, ``make_attribute_wrapper``,
    ``@box`` or ``@unbox``, an ``@overload``...), and, wherever it was registered, what numba finds by
    a name your code reads: an ``@overload`` of a library's function (``np.busday_count(...)``), an
    ``@overload_method``, ``@overload_attribute`` or ``@overload_classmethod`` (``choices.limit()``,
    ``view.limit``), an attribute's typing or lowering (an ``@overload`` of your own stub, or a
    ``@register_jitable`` function, is refused where the walk meets it, so one your code never calls
    is not refused here). A registration made wholly by a package installed into site-packages (pandas'
    ``@overload_method`` of its Series' ``max``, a numba extension library) is not yours: where a
    name your code reads finds it, its package is returned, for the key to hold that package's version."""
    modules = {x[1] for x in seen if isinstance(x, tuple) and x[0] == "module"}
    names = {x[1] for x in seen if isinstance(x, tuple) and x[0] == "name"}
    packages = set()
    for obj, kind, where, found_by, own_key in _registered():
        mine = {m for m in where if not _installed(m)}
        if not mine:
            if found_by & names:
                packages |= {m.partition(".")[0] for m in where}
            continue
        if found_by & names or (mine & modules and not own_key):
            raise _unreadable(obj, kind)
    return sorted(packages)


# numba's registries of typing and lowering are lists that only grow: the list, and how much of it was
# read, by id; and the registrations of yours found in them so far (see _registered)
_READ: dict[int, tuple[list, int]] = {}
_REGISTERED: list = []


def _registered() -> list:
    """Your code's registrations with numba: (what to name, its kind, the modules of yours it is made
    of, the names numba finds it by). Its tables by type, where a registration can be replaced, are
    read whole each time."""
    from numba.core import imputils, pythonapi
    from numba.core.datamodel import default_manager
    from numba.core.registry import cpu_target
    from numba.core.typing import templates
    from numba.core.typing.typeof import typeof_impl

    lists = []
    for r in dict.fromkeys([templates.builtin_registry, *cpu_target.typing_context._registries]):
        lists += [("@infer", r.functions), ("@infer_getattr", r.attributes), ("@infer_global", r.globals)]
    for r in dict.fromkeys([imputils.builtin_registry, *cpu_target.target_context._registries]):
        lists += [("@lower_builtin", r.functions), ("@lower_getattr", r.getattrs), ("@lower_setattr", r.setattrs),
                  ("@lower_cast", r.casts), ("@lower_constant", r.constants)]
    for decorator, entries in lists:
        done, n = _READ.get(id(entries), (entries, 0))[1], len(entries)
        for entry in entries[done:n]:
            _remember(decorator, entry, _REGISTERED)
        _READ[id(entries)] = (entries, n)  # holding the list keeps its id its own
    found = list(_REGISTERED)
    for decorator, table in (("typeof_impl.register", typeof_impl.registry),
                             ("register_model", default_manager._handlers), ("@box", pythonapi._boxers.functions),
                             ("@unbox", pythonapi._unboxers.functions), ("@reflect", pythonapi._reflectors.functions)):
        for key, impl in list(table.items()):
            _remember(decorator, (impl, key), found)
    return found


def _remember(decorator: str, entry, out: list) -> None:
    """Append registration ``entry`` (as ``decorator`` stores it) to ``out`` if it is made of your code."""
    from numba.core.typing.templates import FunctionTemplate, _OverloadAttributeTemplate

    names: set = set()
    templates: list = []
    if decorator in ("@infer", "@infer_getattr"):
        impl, key, templates = entry, getattr(entry, "key", None), [entry]
    elif decorator == "@infer_global":
        (key, impl), templates = entry, list(getattr(entry[1], "templates", ()))
        names |= _name_of(key)
    elif decorator == "@lower_builtin":
        impl, key = entry[0], entry[1:]
        names |= _name_of(entry[1])
    elif decorator in ("@lower_getattr", "@lower_setattr"):
        impl, key = entry[0], entry[2]
        if isinstance(entry[1], str):
            names.add(entry[1])
        else:  # None: every attribute that has no lowering of its own
            decorator += "_generic"
    else:
        impl, key = entry
    parts = [*_parts(impl), *_parts(key)]
    yours = [p for p in parts if isinstance(p.__module__, str) and not _outside(p.__module__)]
    if not yours:
        return
    for maker in ("type_callable", "make_attribute_wrapper"):  # numba's helpers: their templates, lowerings
        if any(getattr(p, "__qualname__", "").startswith(maker + ".") for p in parts):
            decorator = f"@{maker}" if maker == "type_callable" else maker
    obj, kind = yours[0], f"registered with numba by {decorator}"
    own_key = _yours(key)  # made for a function of yours, which the walk meets where your code calls it
    for template in templates:
        if FunctionTemplate in template.__mro__:
            names |= _name_of(getattr(template, "key", None))
        names |= {a.removeprefix("resolve_") for a in dir(template) if a.startswith("resolve_")}
        f = getattr(template, "_overload_func", None)
        if getattr(template, "_definition_func", None) is not None:
            obj, kind = template.key, "an @intrinsic"
        elif f is None:
            continue
        elif _OverloadAttributeTemplate in template.__mro__:
            names.add(template._attr)
            obj, kind = f, _attribute_kind(template)
        elif _yours(f):
            key = template.key
            where = getattr(key, "__module__", None)
            obj, kind = f, f"an @overload of {where + '.' if where else ''}{getattr(key, '__name__', key)}"
            own_key = own_key or _yours(key)
        else:  # numba's own wrapper of your function
            obj, kind = template.key, "a @register_jitable function"
            own_key = own_key or _yours(template.key)
    out.append((obj, kind, frozenset(p.__module__ for p in yours), frozenset(names), own_key))


def _name_of(key) -> set:
    """The name your code reads that numba finds a registration for ``key`` by (a library's function:
    ``np.busday_count``); none for a key the walk meets itself (a function or class of yours, an
    ``@intrinsic``...), nor for an operation's (``"getitem"``)."""
    name = getattr(key, "__name__", None)
    if (isinstance(key, str) or not isinstance(name, str) or _yours(key) or _made_by_numba(key)
            or (isinstance(key, type) and not _outside(key.__module__))):
        return set()
    return {name}


def _attribute_kind(template) -> str:
    """What an ``@overload_attribute``, ``@overload_method`` or ``@overload_classmethod`` is, and of what."""
    from numba.core.typing.templates import _OverloadMethodTemplate

    key = template.key
    if not issubclass(template, _OverloadMethodTemplate):
        kind = "an @overload_attribute"
    elif isinstance(key, nbtypes.TypeRef):
        kind, key = "an @overload_classmethod", key.instance_type
    else:
        kind = "an @overload_method"
    return f"{kind} (.{template._attr} of {getattr(key, '__name__', key)})"


def _parts(obj, depth: int = 0):
    """The functions and classes a registration is made of: ``obj``, what a numba-made function's
    closure or template class holds, the classes of the types it is keyed by."""
    from numba.core.typing.templates import AttributeTemplate, FunctionTemplate

    if depth > 4:
        return
    if isinstance(obj, (staticmethod, classmethod)):
        obj = obj.__func__
    if isinstance(obj, types.FunctionType):
        yield obj
        for cell in obj.__closure__ or ():
            try:
                value = cell.cell_contents
            except ValueError:  # an empty cell
                continue
            yield from _parts(value, depth + 1)
    elif isinstance(obj, type):
        yield obj
        if _outside(obj.__module__) and (FunctionTemplate in obj.__mro__ or AttributeTemplate in obj.__mro__):
            for name, value in vars(obj).items():  # a template numba made: of your function, type...
                if name != "key" and not (name.startswith("__") and name.endswith("__")):  # key: after it
                    yield from _parts(value, depth + 1)
            yield from (base for base in obj.__bases__ if not _outside(base.__module__))
    elif isinstance(obj, nbtypes.Type):
        yield type(obj)
        yield from _parts(list(getattr(obj, "templates", ())), depth + 1)  # a Function's
    elif isinstance(obj, (tuple, list)):
        for x in obj:
            yield from _parts(x, depth + 1)


def _unreadable(obj, kind: str) -> ValueError:
    """The refusal of ``obj``, ``kind`` of numba code the key cannot read: what it is and what to do."""
    name = f"{getattr(obj, '__module__', None)}.{getattr(obj, '__qualname__', getattr(obj, '__name__', obj))}"
    return ValueError(
        f"{name} is {kind}: numba keeps its implementation where the pairing key cannot fingerprint it, "
        f"so a cached pairing could play stale code after it changes; write it as an @njit function "
        f"(numba.njit) that your decision calls")


def _fingerprint_class(cls: type, h, seen: set) -> None:
    """Hash a class as compiled code reads it: its attributes' values (an enum's members'), its methods."""
    h.update(f"C{cls.__module__}.{cls.__qualname__}".encode())
    if _outside(cls.__module__) or id(cls) in seen:
        return
    seen.add(id(cls))
    is_enum = issubclass(cls, enum.Enum)
    if is_enum:
        for name, member in cls.__members__.items():  # aliases included
            h.update(b"E" + name.encode())
            _fingerprint(member.value, h, seen)
    for klass in cls.__mro__:
        if _outside(klass.__module__):
            continue  # object, int, enum.IntEnum...
        _walked(klass.__module__, seen)
        h.update(b"B" + klass.__qualname__.encode())
        for name in sorted(vars(klass)):
            if name.startswith("__") and name.endswith("__"):
                continue
            if is_enum and (name in cls.__members__ or (name.startswith("_") and name.endswith("_"))):
                continue  # the members (above) and enum's own bookkeeping (_member_map_, ...)
            value = vars(klass)[name]
            if isinstance(value, (staticmethod, classmethod)):
                value = value.__func__
            elif isinstance(value, property):
                value = (value.fget, value.fset, value.fdel)
            h.update(b"A" + name.encode())
            _fingerprint(value, h, seen)


def decisions_digest(decisions: dict) -> str:
    """A digest of the decisions' code and of what it reads (:func:`_fingerprint`), without the kernel's source or
    the compiler's versions: what tells two ``KernelStrategy`` objects' play apart in their labels, the same across
    versions of the simulator."""
    h = hashlib.sha256()
    seen: set = set()
    for name in sorted(decisions):
        h.update(b"D" + name.encode())
        _fingerprint(decisions[name], h, seen)
    return h.hexdigest()


def pairing_key(decisions: dict) -> str:
    """The compiled pairing's key: a hash of the kernel's sources and flags, the compiler's versions and
    the decisions' code, options and defaults, with everything they read (:func:`_fingerprint`)."""
    from sim._cache import loaded_sources_hash

    h = hashlib.sha256(loaded_sources_hash().encode())  # the kernel as imported, which the pairing compiles
    h.update(repr([_library_version(m) for m in ("numba", "numpy", "llvmlite", "sys")]).encode())
    seen: set = set()
    for name in sorted(decisions):
        h.update(b"D" + name.encode())
        _fingerprint(decisions[name], h, seen)
    for package in _refuse_registered(seen):  # installed packages' numba registrations your code reaches
        top = sys.modules.get(package)
        h.update(f"P{package}={getattr(top, '__version__', None)!r}".encode())
    return h.hexdigest()


# --- the on-disk cache of a pairing -----------------------------------------------------------
def pairing_cache_dir(key: str):
    """Folder of a pairing's compiled code: ``<kernel cache>/pairings/<key>``."""
    from sim._cache import cache_dir

    return cache_dir() / "pairings" / key[:32]


class _PairingLocator(_CacheLocator):
    """Locate a pairing's compiled batch function in its own folder (see :func:`pairing_cache_dir`)."""

    folder = ""

    def __init__(self, py_func, py_file):
        """Locate ``py_func`` of ``py_file``."""
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno

    def get_cache_path(self):
        """The pairing's folder."""
        return self.folder

    def get_source_stamp(self):
        """The source file's time and size (numba's own stamp)."""
        st = os.stat(self._py_file)
        return st.st_mtime, st.st_size

    def get_disambiguator(self):
        """The function's first line."""
        return str(self._lineno)

    @classmethod
    def from_function(cls, py_func, py_file):
        """Every function: the pairing chose this locator."""
        return cls(py_func, py_file)


def _pairing_cache(py_func, key: str) -> FunctionCache:
    """numba's function cache for ``py_func`` in the pairing's folder, keyed by ``key`` as well."""
    locator = type("Locator", (_PairingLocator,), {"folder": str(pairing_cache_dir(key))})
    impl = type("Impl", (CompileResultCacheImpl,), {"_locator_classes": [locator]})

    class PairingCache(FunctionCache):
        _impl_class = impl

        def _index_key(self, sig, codegen):
            """numba's key and the pairing's."""
            return (*super()._index_key(sig, codegen), key)

    return PairingCache(py_func)


# --- the answers the readable engine accepts (sim/rules: StrategyError) --------------------------
# Your decisions' answers are checked in their adapters (below) as the readable engine checks a
# Python strategy's: an answer it refuses stops the kernel with a ValueError naming the decision and
# the answer. (The built-in decisions answer legally by construction: their call sites keep only the
# kernel's own cheap checks.) Compiled, a check is numba code typed on the answer's type; an answer
# of a type the readable engine refuses (a float for an index, an int for true-or-false) is refused
# whenever the decision is asked. The messages are built at run time: the functions raising them use
# numba's runtime (the kernel runs without it), and run only to raise.
_RAISE_OPTIONS = {**KERNEL_OPTIONS, "_nrt": True, "cache": False}
REFUSED = "KernelStrategy decision "  # how each refusal begins (KernelStrategy.refusal adds the name)
# how the view's refusal of an index out of range begins (sim.kernel.view): KernelStrategy.refusal
# replaces it with the strategy's name, leaving the readable engine's words (sim.rules.state.PlayerView)
VIEW_REFUSED = "KernelStrategy view: "


def _refuse_range_plain(code, answer, lo, hi):
    """Refuse an answer outside ``lo..hi``."""
    raise ValueError(REFUSED + DECISIONS[code] + " answered " + str(answer)
                     + " (legal: " + str(lo) + " to " + str(hi) + ")")


def _refuse_type_plain(code, what, want):
    """Refuse an answer of a type the decision does not take."""
    raise ValueError(REFUSED + DECISIONS[code] + " answered a value of type " + what + ", not " + want)


def _refuse_value_plain(code, answer, want):
    """Refuse an answer of the wrong kind (an integer for true-or-false)."""
    raise ValueError(REFUSED + DECISIONS[code] + " answered " + str(answer) + ", not " + want)


def _refuse_spend_plain(code, mask):
    """Refuse a gamble answer that spends Resolve the player does not have."""
    raise ValueError(REFUSED + DECISIONS[code] + " answered (" + str(mask)
                     + ", True): spends Resolve it does not have")


def _refuse_exchanges_plain(code, mask, spend, n, allowed):
    """Refuse a gamble answer that exchanges more cards than allowed."""
    raise ValueError(REFUSED + DECISIONS[code] + " answered (" + str(mask) + ", "
                     + ("True" if spend else "False") + "): exchanges " + str(n) + " cards (allowed "
                     + str(allowed) + ")")


def _refuse_henchmen_plain(code, i, h, k, n_h):
    """Refuse a level-2 henchmen answer that is not k different henchmen."""
    raise ValueError(REFUSED + DECISIONS[code] + " wrote out[" + str(i) + "] = " + str(h)
                     + " (legal: " + str(k) + " different henchmen of 0 to " + str(n_h - 1)
                     + " in out[:k]; -1: not written)")


_refuse_range = njit(**_RAISE_OPTIONS)(_refuse_range_plain)
_refuse_type = njit(**_RAISE_OPTIONS)(_refuse_type_plain)
_refuse_value = njit(**_RAISE_OPTIONS)(_refuse_value_plain)
_refuse_spend = njit(**_RAISE_OPTIONS)(_refuse_spend_plain)
_refuse_exchanges = njit(**_RAISE_OPTIONS)(_refuse_exchanges_plain)
_refuse_henchmen = njit(**_RAISE_OPTIONS)(_refuse_henchmen_plain)



def _uncalled_plain(answer):
    """Refuse a view method as an answer, the call forgotten (``return view.base_token``): its one line."""
    from sim.kernel.view import _BaseMethod

    if isinstance(answer, _BaseMethod):
        answer._refuse()


def _uncalled_type(t) -> bool:
    """Whether numba type ``t`` is a view method, the call forgotten: no answer check takes it, so the pairing
    does not compile, and compile_failure says why in one line."""
    return isinstance(t, nbtypes.BoundFunction) and type(t.this).__name__ == "ViewType"


def _index_answer(code, answer, lo, hi):
    """``answer``, an integer in ``lo..hi`` (True and False count as 1 and 0, as ``isinstance(x, int)`` has it)."""
    _uncalled_plain(answer)
    if not is_index(answer):
        _refuse_type_plain(code, type(answer).__name__, "an integer")
    if not lo <= answer <= hi:
        _refuse_range_plain(code, int(answer), lo, hi)
    return int(answer)


def _int_answer(code, answer, lo, hi):
    """``answer``, an integer in ``lo..hi``, not True or False (``reroll``, a gamble's mask)."""
    _uncalled_plain(answer)
    if not is_integer(answer):
        _refuse_type_plain(code, type(answer).__name__, "an integer")
    if not lo <= answer <= hi:
        _refuse_range_plain(code, int(answer), lo, hi)
    return int(answer)


def _flag_answer(code, answer):
    """``answer``, True or False (``use_auto_pass``, ``status_top_secret``)."""
    _uncalled_plain(answer)
    if not isinstance(answer, (bool, np.bool_)):
        if is_integer(answer):
            _refuse_value_plain(code, int(answer), "true or false")
        _refuse_type_plain(code, type(answer).__name__, "true or false")
    return bool(answer)


def _gamble_answer(code, answer, free, resolve):
    """``(mask, spend)``: exchange the hand positions of ``mask`` (0..31), spending 1 Resolve or not."""
    _uncalled_plain(answer)
    if not (isinstance(answer, tuple) and len(answer) == 2):
        _refuse_type_plain(code, type(answer).__name__, "a pair (mask, spend_resolve)")
    mask = _int_answer(code, answer[0], 0, 31)
    spend = _flag_answer(code, answer[1])
    n = bin(mask).count("1")
    if spend and resolve <= 0:
        _refuse_spend_plain(code, mask)
    allowed = RESOLVE_EXCHANGE if spend else free
    if n > allowed:
        _refuse_exchanges_plain(code, mask, spend, n, allowed)
    return mask, spend


def _ranged_typer(kinds):
    """The compiled form of an integer answer check: in ``lo..hi`` for an answer typed as one of
    ``kinds``, refused whatever its value for any other type."""
    def typer(code, answer, lo, hi):
        """The check for the answer's numba type."""
        if _uncalled_type(answer):
            return None
        if isinstance(answer, nbtypes.Integer) and not answer.signed and answer.bitwidth >= 64:
            def impl_unsigned(code, answer, lo, hi):
                """The answer, checked in range before it becomes an int64 (2**64 - 1 would wrap to -1)."""
                if answer > np.uint64(9223372036854775807):
                    _refuse_range(code, answer, lo, hi)
                a = np.int64(answer)
                if a < lo or a > hi:
                    _refuse_range(code, a, lo, hi)
                return a

            return impl_unsigned
        if isinstance(answer, kinds):
            def impl(code, answer, lo, hi):
                """The answer, checked in range."""
                a = np.int64(answer)
                if a < lo or a > hi:
                    _refuse_range(code, a, lo, hi)
                return a

            return impl
        what = str(answer)

        def refuse(code, answer, lo, hi):
            """An answer of a type the decision does not take."""
            _refuse_type(code, what, "an integer")
            return np.int64(0)

        return refuse

    return typer


_index_answer_nb = overload(_index_answer)(_ranged_typer((nbtypes.Integer, nbtypes.Boolean)))
_int_answer_nb = overload(_int_answer)(_ranged_typer((nbtypes.Integer,)))


@overload(_flag_answer)
def _flag_answer_nb(code, answer):
    """Compiled :func:`_flag_answer`, typed on the answer."""
    if _uncalled_type(answer):
        return None
    if isinstance(answer, nbtypes.Boolean):
        return lambda code, answer: bool(answer)
    if isinstance(answer, nbtypes.Integer):
        def refuse_int(code, answer):
            """An integer where true or false is asked."""
            _refuse_value(code, np.int64(answer), "true or false")
            return False

        return refuse_int
    what = str(answer)

    def refuse(code, answer):
        """An answer that is not true or false."""
        _refuse_type(code, what, "true or false")
        return False

    return refuse


@overload(_gamble_answer)
def _gamble_answer_nb(code, answer, free, resolve):
    """Compiled :func:`_gamble_answer`, typed on the answer."""
    if _uncalled_type(answer):
        return None
    if isinstance(answer, nbtypes.BaseTuple) and len(answer) == 2:
        def impl(code, answer, free, resolve):
            """The (mask, spend) answer, checked."""
            mask = _int_answer(code, answer[0], 0, 31)
            spend = _flag_answer(code, answer[1])
            n = 0
            for i in range(5):
                n += (mask >> i) & 1
            if spend and resolve <= 0:
                _refuse_spend(code, mask)
            allowed = RESOLVE_EXCHANGE if spend else free
            if n > allowed:
                _refuse_exchanges(code, mask, spend, n, allowed)
            return mask, spend

        return impl
    what = str(answer)

    def refuse(code, answer, free, resolve):
        """An answer that is not a pair."""
        _refuse_type(code, what, "a pair (mask, spend_resolve)")
        return np.int64(0), False

    return refuse


@njit(**{**KERNEL_OPTIONS, "cache": False})
def _check_henchmen(code, out, k, n_h):
    """``out[:k]``: ``k`` different henchmen (``setup_level2_henchmen``; -1 where nothing was written)."""
    for i in range(k):
        h = out[i]
        if h < 0 or h >= n_h:
            _refuse_henchmen(code, i, h, k, n_h)
        for j in range(i):
            if out[j] == h:
                _refuse_henchmen(code, i, h, k, n_h)


# --- what a decision writes into the arrays it is handed ------------------------------------------
# ``setup_level2_henchmen`` answers in ``out``; numba stores a float written into it as its integer
# part, and True or False as 1 or 0, silently: ``out[0] = 2.7`` would play henchman 2, where the
# readable engine refuses 2.7 (and True). The other decisions' options (``choices``, ``moves``,
# ``dice``...) are the kernel's own int64 arrays, which it reads again after the answer (where the
# readable engine hands a copy): a write into one would change the game. So a decision that writes
# into its options at all, or a float, a complex number or a bool into ``out`` (directly, through a
# slice, a reshape, ``.flat`` or ``.fill``, or in an @njit helper it hands the array to), is refused
# when numba types it for the pairing, before any game; a pairing so refused is never cached. The
# options are also handed over as numba's read-only arrays (:func:`_read_only`), which no code can
# write, however it reaches them. Run as plain Python (``sim.twin``), the arrays handed to the
# decision refuse such writes themselves.
ANSWER_ARRAY = "out"  # the one array a decision writes (its answer); every other array is read only


def _write_refusal(name: str, param: str, what: str | None, dtype, where: str) -> ValueError:
    """The refusal of decision ``name`` writing into its ``param``: a value described by ``what`` into
    ``out``, or anything (``what`` None) into one of its options."""
    if what is None:
        return ValueError(f"{REFUSED}{name} wrote into {param} ({where}), which it may only read (the kernel "
                          f"plays on from its options after the answer)")
    article = "an" if what[:1] in "aeiou" else "a"
    return ValueError(f"{REFUSED}{name} wrote {article} {what} into {param} ({where}), not an integer "
                      f"(the kernel would silently store it as {dtype})")


@intrinsic
def _read_only(typingctx, a):
    """``a`` as a read-only array (numba then refuses to compile any write into it); other values as
    they are. The same data, no copy. (Compiled only: the plain replay, ``sim.twin``, hands the value
    itself to a decision, whose arrays it guards: :func:`_guard_writes`.)"""
    if isinstance(a, nbtypes.Array) and a.mutable:
        def codegen(context, builder, sig, args):
            """The array itself."""
            return impl_ret_borrowed(context, builder, sig.return_type, args[0])

        return a.copy(readonly=True)(a), codegen

    def same(context, builder, sig, args):
        """The value itself."""
        return impl_ret_borrowed(context, builder, sig.return_type, args[0])

    return a(a), same


def _non_integer_type(t) -> str | None:
    """What a value of numba type ``t`` is, where it is a float, a complex or a bool (or an array or a
    tuple of them); None for an integer, or a type this check leaves to numba."""
    if isinstance(t, nbtypes.Optional):
        return _non_integer_type(t.type)
    if isinstance(t, (nbtypes.Boolean, nbtypes.Float, nbtypes.Complex)):
        return str(nbtypes.unliteral(t))
    if isinstance(t, nbtypes.Array):
        inner = _non_integer_type(t.dtype)
        return None if inner is None else f"array of {inner}"
    if isinstance(t, nbtypes.BaseTuple):
        return next((w for w in map(_non_integer_type, t.types) if w is not None), None)
    return None


def _integer_dtype(t):
    """The dtype of the integer array behind numba type ``t`` (an array, its ``.flat``), else None."""
    if isinstance(t, nbtypes.NumpyFlatType):
        t = t.array_type
    if isinstance(t, nbtypes.Array) and isinstance(t.dtype, nbtypes.Integer):
        return t.dtype
    return None


def _typed_code(d, argtypes: tuple):
    """numba's typed code of dispatcher ``d`` called with ``argtypes`` (typed now if it was not), or None
    (where numba cannot type the call, its own error, raised where the adapter calls it, says why)."""
    from numba.core.errors import TypingError

    try:
        sig = d.typingctx.resolve_function_type(nbtypes.Dispatcher(d), argtypes, {})
    except TypingError:
        return None
    cres = d.overloads.get(tuple(sig.args)) if sig is not None else None
    if cres is None:
        return None
    if cres.type_annotation is None:  # loaded from numba's cache of it: type a copy that is not cached
        copy = type(d)(py_func=d.py_func, locals=dict(d.locals), targetoptions=dict(d.targetoptions),
                       pipeline_class=d._compiler.pipeline_class)
        copy.compile(tuple(sig.args))
        cres = copy.overloads[tuple(sig.args)]
    return cres.type_annotation


def _method_name(fnty) -> str:
    """The name of the method a bound function type calls (``fill`` of ``out.fill``)."""
    key = fnty.typing_key
    return key[-1] if isinstance(key, tuple) else str(key).rpartition(".")[2]


def _illegal_write(d, argtypes: tuple, params: dict, seen: set):
    """The first write into one of ``params`` (argument index -> the decision's name for it) by
    dispatcher ``d`` called with ``argtypes``, or by an @njit function it hands one to, that is refused:
    any write into an option, a float, complex or bool into ``out``. (param, what was written (None
    for an option), the array's dtype, where), or None."""
    import operator

    from numba.core import ir

    if (id(d), argtypes, tuple(sorted(params.items()))) in seen:
        return None
    seen.add((id(d), argtypes, tuple(sorted(params.items()))))
    typed = _typed_code(d, argtypes)
    if typed is None:
        return None
    typemap, calltypes = typed.typemap, typed.calltypes
    body = [inst for block in typed.blocks.values() for inst in block.body]
    held: dict[str, str] = {}  # variable -> the argument whose array it holds (a view, a tuple of it...)
    for inst in body:
        if isinstance(inst, ir.Assign) and isinstance(inst.value, ir.Arg) and inst.value.index in params:
            held[inst.target.name] = params[inst.value.index]
    changed = True
    while changed:  # whatever is made from such a variable and is no number may hold the array too
        changed = False
        for inst in body:
            if not isinstance(inst, ir.Assign) or inst.target.name in held:
                continue
            t = typemap.get(inst.target.name)
            if t is None or isinstance(t, (nbtypes.Number, nbtypes.Boolean, nbtypes.NoneType)):
                continue
            value = inst.value
            for v in [value] if isinstance(value, ir.Var) else value.list_vars() if isinstance(value, ir.Expr) else ():
                if v.name in held:
                    held[inst.target.name] = held[v.name]
                    changed = True
                    break

    def bad(param, target, value, loc):
        """The write of ``value`` into ``target`` (types) if it is refused."""
        where = f"{_shown(d.py_func.__qualname__)} at {loc.short()}"
        if param != ANSWER_ARRAY:
            return param, None, None, where
        dtype, what = _integer_dtype(target), _non_integer_type(value)
        if dtype is None or what is None:
            return None
        return param, what, dtype, where

    for inst in body:
        found = None
        if isinstance(inst, (ir.SetItem, ir.StaticSetItem)) and inst.target.name in held:
            found = bad(held[inst.target.name], typemap[inst.target.name], typemap[inst.value.name], inst.loc)
        elif isinstance(inst, ir.Assign) and isinstance(inst.value, ir.Expr):
            e = inst.value
            if e.op == "inplace_binop" and e.lhs.name in held:
                found = bad(held[e.lhs.name], typemap[e.lhs.name], typemap[e.rhs.name], inst.loc)
            elif e.op == "call":
                fnty, args = typemap[e.func.name], list(e.args)
                if (isinstance(fnty, nbtypes.BoundFunction) and e.func.name in held and _method_name(fnty) == "fill"
                        and len(args) == 1):
                    found = bad(held[e.func.name], fnty.this, typemap[args[0].name], inst.loc)
                elif (isinstance(fnty, nbtypes.Function) and fnty.typing_key is operator.setitem
                      and len(args) == 3 and args[0].name in held):
                    found = bad(held[args[0].name], typemap[args[0].name], typemap[args[2].name], inst.loc)
                elif isinstance(fnty, nbtypes.Dispatcher) and calltypes.get(e) is not None:
                    sig = calltypes[e]
                    names = list(inspect.signature(fnty.dispatcher.py_func).parameters)
                    given = {i: v for i, v in enumerate(args)}
                    given.update({names.index(k): v for k, v in e.kws if k in names})
                    handed = {i: held[v.name] for i, v in given.items() if v.name in held and i < len(sig.args)}
                    if handed:
                        found = _illegal_write(fnty.dispatcher, tuple(sig.args), handed, seen)
        if found:
            return found
    return None


def _check_writes(code, user, args):
    """Plain Python: nothing to check here (the plain replay hands the decision guarded arrays:
    :class:`_WriteGuard`)."""


@overload(_check_writes, prefer_literal=True)
def _check_writes_nb(code, user, args):
    """Refuse, as the pairing types it, a decision ``user`` called with ``args`` (the view and its
    options, read-only as the adapter hands them over) that writes into one of its array options, or a
    float, complex or bool into ``out``. The decision is typed for the very arguments of the adapter's
    call, so it compiles once; only where that fails (a write into a read-only option, or an error of
    numba's own) is it typed again on writable arrays, to find and name the write."""
    if isinstance(code, nbtypes.IntegerLiteral) and isinstance(user, nbtypes.Dispatcher):
        name = DECISIONS[code.literal_value]
        arrays = {i: SIGNATURES[name][i - 1] for i, t in enumerate(args.types) if i and isinstance(t, nbtypes.Array)}
        argtypes = tuple(args.types)
        if arrays and _typed_code(user.dispatcher, argtypes) is None:
            argtypes = tuple(t.copy(readonly=False) if isinstance(t, nbtypes.Array) else t for t in argtypes)
        found = _illegal_write(user.dispatcher, argtypes, arrays, set()) if arrays else None
        if found:
            raise _write_refusal(name, *found)
    return lambda code, user, args: None


def _plain_non_integer(value) -> str | None:
    """What ``value`` is, where it is a float, a complex or a bool (or holds one); None otherwise."""
    if isinstance(value, (bool, np.bool_, float, np.floating, complex, np.complexfloating)):
        return type(value).__name__
    if isinstance(value, np.ndarray):
        return f"array of {value.dtype}" if value.dtype.kind in "bfc" else None
    if isinstance(value, (list, tuple)):
        return next((w for w in map(_plain_non_integer, value) if w is not None), None)
    return None


class _WriteGuard(np.ndarray):
    """An array handed to a decision run as plain Python (``sim.twin``): any write into an option, and
    a float, a complex number or True or False written into ``out`` (or into a view of either), is
    refused, as compiled."""

    _decision: str | None = None
    _param: str | None = None

    def __array_finalize__(self, obj):
        """A view of a guarded array is guarded too."""
        self._decision = getattr(obj, "_decision", None)
        self._param = getattr(obj, "_param", None)

    def _check(self, value):
        """Refuse the write of ``value``: into an option at all, into ``out`` if it is no integer."""
        if self._decision is None:
            return
        what = _plain_non_integer(value) if self._param == ANSWER_ARRAY else None
        if self._param != ANSWER_ARRAY or (what is not None and np.issubdtype(self.dtype, np.integer)):
            import traceback

            caller = traceback.extract_stack(limit=3)[0]
            where = f"{caller.name} at {os.path.basename(caller.filename)}:{caller.lineno}"
            raise _write_refusal(self._decision, self._param, what, self.dtype, where)

    def __setitem__(self, index, value):
        """Write ``value`` if it is an integer (or integers)."""
        self._check(value)
        super().__setitem__(index, value)

    def fill(self, value):
        """Fill with ``value`` if it is an integer."""
        self._check(value)
        super().fill(value)

    @property
    def flat(self):
        """numpy's flat iterator, its writes checked."""
        return _GuardedFlat(self)


class _GuardedFlat:
    """``guarded.flat``: numpy's flat iterator of a :class:`_WriteGuard`, whose writes are checked."""

    def __init__(self, array: _WriteGuard):
        """The iterator over ``array``."""
        self._array, self._flat = array, np.ndarray.flat.__get__(array)

    def __getitem__(self, index):
        """numpy's read."""
        return self._flat[index]

    def __setitem__(self, index, value):
        """numpy's write, if ``value`` is an integer (or integers)."""
        self._array._check(value)
        self._flat[index] = value

    def __iter__(self):
        """numpy's iteration."""
        return iter(self._flat)

    def __len__(self):
        """numpy's length."""
        return len(self._flat)


def _guard_writes(name: str, f):
    """Decision ``f(view, ...)`` (plain Python) called with its arrays guarded (:class:`_WriteGuard`;
    the options read-only), as the plain replay calls your decision ``name``."""
    params = SIGNATURES[name]

    def guarded(view, *args):
        """``f`` called with the guarded arrays."""
        handed = []
        for param, a in zip(params, args):
            if isinstance(a, np.ndarray):
                a = a.view(_WriteGuard)
                a._decision, a._param = name, param
                if param != ANSWER_ARRAY:  # numpy's own writers (np.copyto...) refuse too
                    a.flags.writeable = False
            handed.append(a)
        return f(view, *handed)

    return guarded


# decision -> the check of the answer ``a`` (as the readable engine checks it), as adapter source.
# The other decisions are yes-or-no questions whose answer the readable engine reads as true or
# false, whatever it is (``if strategy.rest(view): ...``): the kernel reads it so too.
_CHECKS = {
    **dict.fromkeys(("setup_advanced_skill", "move", "token", "test_option", "mission_reward", "skill_up",
                     "advanced_skill", "skill_down"), "_index_answer({code}, a, 0, n - 1)"),
    "setup_extras": "_index_answer({code}, a, 0, min(n, max_un))",
    "reroll": "_int_answer({code}, a, -1, n - 1)",
    "use_auto_pass": "_flag_answer({code}, a)",
    "status_top_secret": "_flag_answer({code}, a)",
    "gamble_exchange": "_gamble_answer({code}, a, free, v.resolve(seat))",
}


def _adapter(name: str, user, key: str = ""):
    """The kernel-side decision ``name(ctx, seat, ...)`` calling ``user(view, ...)`` and checking its answer
    (compiled under a name of the pairing ``key``'s own)."""
    from sim.kernel.view import decision_view

    args = SIGNATURES[name]
    code = DECISIONS.index(name)
    if name == "setup_level2_henchmen":  # seat 0 decides for the table, writing out[:k]
        handed = ", ".join(_handed(name))
        src = (f"def {name}(ctx, {', '.join(args)}):\n"
               f"    for i in range(k):\n"
               f"        out[i] = -1\n"
               f"    v = _view(ctx, 0, {code})\n"
               f"    _check_writes({code}, _user, (v, {handed}))\n"
               f"    _user(v, {handed})\n"
               f"    _check_henchmen({code}, out, k, v.n_henchmen)\n")
    else:
        a = "".join(f", {x}" for x in args)
        check = _CHECKS.get(name, "a").format(code=code)
        handed = "".join(f", _read_only({x})" for x in _handed(name))  # the options: read only
        src = (f"def {name}(ctx, seat{a}):\n"
               f"    v = _view(ctx, seat, {code})\n"
               f"    _check_writes({code}, _user, (v{handed},))\n"
               f"    a = _user(v{handed})\n"
               f"    return {check}\n")
    env = {"_user": user, "_view": decision_view, "_index_answer": _index_answer, "_int_answer": _int_answer,
           "_flag_answer": _flag_answer, "_gamble_answer": _gamble_answer, "_check_henchmen": _check_henchmen,
           "_check_writes": _check_writes, "_read_only": _read_only}
    exec(src, env)  # noqa: S102 - a fixed template: numba needs the arguments spelled out
    if key:  # (an adapter made outside a pairing, by a test or a replay, is never cached)
        env[name].__qualname__ = _own_name(name, key)
    return njit(**{**KERNEL_OPTIONS, "cache": False})(env[name])


_OWN_NAME = re.compile(r"__pairing_[0-9a-f]{32}")


def _shown(text: str) -> str:
    """``text`` with the pairings' own names said as their originals' (``level2_flags``, not its copy's name)."""
    return _OWN_NAME.sub("", text)


def _own_name(qualname: str, key: str) -> str:
    """The name a pairing compiles its copy of ``qualname`` under: numba names a compiled function by its module,
    its name and a count of the functions this process compiled, so a copy that kept the original's name could
    take the same symbol as code loaded from the cache (compiled by another process), and the program would call
    the wrong one: a pairing played the built-in strategy's games, its decisions never asked."""
    return f"{qualname}__pairing_{key[:32]}"


class _Fresh:
    """Copies of your compiled functions, made for one pairing so that none of their earlier code is reused.

    numba compiles a dispatcher once per signature, freezing in the values of the globals
    it reads, and serves that code to every later caller: after ``module.T = 1`` (or a
    notebook cell that redefines a helper), a pairing compiled from the same dispatcher
    would play the code compiled with ``T = 0`` under a key that says ``T = 1``, and cache
    it on disk. So a pairing compiles copies: every dispatcher of yours that a decision
    reaches (through globals, closures, default arguments, module attributes and tuples) is
    rebuilt from its Python function, its globals as they are now and its options, and
    compiled afresh (not from numba's own cache of it). Your dispatchers are left as they are.
    """

    def __init__(self, key: str = ""):
        """No copies yet; ``key``: the pairing's, whose copies are compiled under names of their own."""
        self._key = key
        self._copies: dict[int, object] = {}  # id(original) -> its copy
        self._originals: list = []  # kept alive while their ids are keys
        self._module_names: dict[int, set] = {}  # id(module) -> the names copied into its copy
        self._defaulting: list = []  # the functions whose default arguments are being copied, outermost first
        self._todo: list = []  # (function, its copy's globals, its copy's cells): globals and closure to copy
        self._depth = 0

    def value(self, obj, names: frozenset = frozenset()):
        """``obj`` with the dispatchers it reaches replaced by their copies (``obj`` itself if none)."""
        self._depth += 1
        try:
            out = self._value(obj, names)
            if self._depth == 1:  # the copies' globals and closures, once every copy they may reach exists
                while self._todo:
                    self._fill(*self._todo.pop())
            return out
        finally:
            self._depth -= 1

    def _value(self, obj, names: frozenset = frozenset()):
        """:meth:`value` without filling the copies' globals and closures (done once, by the outermost call)."""
        if isinstance(obj, CPUDispatcher) and not _outside(obj.py_func.__module__):
            return self._dispatcher(obj)
        if isinstance(obj, types.ModuleType) and not _outside(obj.__name__):
            return self._module(obj, names)
        if isinstance(obj, tuple):
            items = [self._value(x) for x in obj]
            if all(a is b for a, b in zip(items, obj)):
                return obj
            return type(obj)._make(items) if hasattr(obj, "_fields") else tuple(items)
        return obj

    def _remember(self, original, copy) -> None:
        """Note ``copy`` as the copy of ``original``."""
        self._copies[id(original)] = copy
        self._originals.append(original)

    def _dispatcher(self, d):
        """A new dispatcher of ``d``'s function, options, default arguments and globals (the copies of those
        that reach others). numba reads the defaults when the dispatcher is made, so they are copied first; the
        globals and closure are filled in later (:meth:`value`), so that a function reaching back to one whose
        defaults are being copied finds its copy."""
        if id(d) in self._copies:
            return self._copies[id(d)]
        f = d.py_func
        if any(g is f for g in self._defaulting):
            chain = " -> ".join(g.__qualname__ for g in self._defaulting[next(
                i for i, g in enumerate(self._defaulting) if g is f):] + [f])
            raise TypeError(f"the default arguments of {f.__qualname__} reach {f.__qualname__} itself ({chain}); "
                            "pass that function as an argument instead")
        self._defaulting.append(f)
        try:
            defaults = self._value(f.__defaults__) if f.__defaults__ is not None else None
            kwdefaults = ({k: self._value(v) for k, v in f.__kwdefaults__.items()}
                          if f.__kwdefaults__ is not None else None)
        finally:
            self._defaulting.pop()
        env = dict(f.__globals__)  # a snapshot: later assignments to the module do not reach the copy
        cells = tuple(types.CellType() for _ in f.__closure__ or ()) or None
        clone = types.FunctionType(f.__code__, env, f.__name__, defaults, cells)
        clone.__kwdefaults__ = kwdefaults
        clone.__qualname__ = _own_name(f.__qualname__, self._key) if self._key else f.__qualname__
        clone.__doc__ = f.__doc__
        copy = type(d)(py_func=clone, locals=dict(d.locals), targetoptions=dict(d.targetoptions),
                       pipeline_class=d._compiler.pipeline_class)
        self._remember(d, copy)  # before the globals: recursive functions reach their own copy
        self._todo.append((f, env, cells))
        return copy

    def _fill(self, f, env: dict, cells) -> None:
        """Put into a copy's globals and closure the copies of what ``f``'s reach."""
        names = frozenset(_names(f.__code__))
        for name in names & env.keys():
            env[name] = self._value(env[name], names)
        for cell, old in zip(cells or (), f.__closure__ or ()):
            try:
                cell.cell_contents = self._value(old.cell_contents, names)
            except ValueError:  # an empty cell stays empty
                pass

    def _module(self, m, names: frozenset):
        """A module object with ``m``'s attributes, ``names`` among them copied."""
        if id(m) not in self._copies:
            copy = types.ModuleType(m.__name__, m.__doc__)
            copy.__dict__.update(vars(m))
            self._remember(m, copy)
            self._module_names[id(m)] = set()
        copy = self._copies[id(m)]
        todo = (names & vars(m).keys()) - self._module_names[id(m)]
        self._module_names[id(m)] |= todo  # before recursing: pkg.sub.pkg ends here
        for name in sorted(todo):
            setattr(copy, name, self._value(vars(m)[name], names))
        return copy


def compile_batch_function(decisions: dict, key: str | None = None):
    """The kernel's batch function with ``decisions`` replaced (compiled for this pairing, cached on disk).

    ``decisions`` map a decision name to ``f(view, ...)``; ``key`` (default
    :func:`pairing_key`) names the pairing's cache folder.
    """
    key = key or pairing_key(decisions)
    fresh = _Fresh(key)  # copies taken now, with the values the key was computed from
    decisions = {name: fresh.value(f) for name, f in decisions.items()}
    strategy_module = importlib.import_module("sim.kernel.strategy")
    modules = [importlib.import_module(f"sim.kernel.{m}") for m in KERNEL_MODULES]
    owner = {}  # id(dispatcher) -> (module, name)
    for m in modules:
        for name, obj in vars(m).items():
            if isinstance(obj, CPUDispatcher) and obj.py_func.__module__ == m.__name__:
                owner[id(obj)] = (m, name)
    # the functions that reach a replaced decision, directly or through other kernel functions
    marked: set[tuple] = set()
    for m in modules:
        for name, obj in vars(m).items():
            if id(obj) in owner and owner[id(obj)] == (m, name):
                used = _names(obj.py_func.__code__)
                if "decide" in used and used & set(decisions):
                    marked.add((m.__name__, name))
    changed = True
    while changed:
        changed = False
        for key_ in list(owner.values()):
            m, name = key_
            if (m.__name__, name) in marked:
                continue
            for ref in _names(getattr(m, name).py_func.__code__):
                target = vars(m).get(ref)
                if id(target) in owner and (owner[id(target)][0].__name__, owner[id(target)][1]) in marked:
                    marked.add((m.__name__, name))
                    changed = True
                    break
    substitute = types.ModuleType(f"{strategy_module.__name__}_custom")
    substitute.__dict__.update(vars(strategy_module))
    substitute.__dict__.update({name: _adapter(name, f, key) for name, f in decisions.items()})
    if "move" in decisions:  # always list the legal moves for the user's choice
        substitute.direct_move = strategy_module.list_the_moves
    envs = {m.__name__: {**vars(m), "decide": substitute} for m in modules}
    clones = {}
    top = ("sim.kernel.game", "simulate_batch")
    for m in modules:
        for name in [n for (mod, n) in marked if mod == m.__name__]:
            f = getattr(m, name).py_func
            clone = types.FunctionType(f.__code__, envs[m.__name__], f.__name__, f.__defaults__, f.__closure__)
            clone.__qualname__ = _own_name(f.__qualname__, key)  # never the symbol of the kernel's own function
            options = {k: v for k, v in getattr(m, name).targetoptions.items() if k != "nopython"}
            options["cache"] = False  # only the batch function is cached (with all it calls), below
            clones[(m.__name__, name)] = njit(**options)(clone)
    for m in modules:
        env = envs[m.__name__]
        for k, v in list(env.items()):
            if id(v) in owner:
                om, on = owner[id(v)]
                if (om.__name__, on) in clones:
                    env[k] = clones[(om.__name__, on)]
    batch = clones[top]
    try:
        batch._cache = _pairing_cache(batch.py_func, key)
    except OSError:
        pass  # a read-only cache folder: compile in memory
    return batch


# numba's words where code the kernel calls needs its runtime (NRT), which the kernel runs without
_NEEDS_RUNTIME = ("Only accept returning of array passed into the function as argument",
                  "NRT required but not enabled")
_FILE_LINE = re.compile(r'^File "(?P<path>[^"]+)", line (?P<line>\d+)')
_AT_LINE = re.compile(r'^During: lowering .* at (?P<path>\S+) \((?P<line>\d+)\)$')
# a view method as the argument numba found no implementation for (``bool(view.base_rest)``): the call forgotten
_UNCALLED = re.compile(r"found for signature.*BoundFunction\(\(<class 'sim\.kernel\.view\.ViewType'>, "
                       r"'(?P<name>\w+)'\)")


def compile_failure(message: str, decisions: dict) -> str:
    """numba's refusal to compile a pairing, said in one line: what numba could not do, the first
    place in your code it points at (a file neither of this package nor installed), and, where
    that code needs numba's runtime, why the kernel has none."""
    lines = [_shown(ln.strip()) for ln in message.splitlines()]
    reasons = [i for i, ln in enumerate(lines) if ln and not ln.startswith("Failed in ")]
    what = lines[reasons[0]] if reasons else "numba gave no reason"
    what = re.sub(r"\[ContextType_[0-9a-f]+\]", "", what)  # the view's type, without the kernel's context hash
    if what.endswith(":"):  # "No implementation of function ... found for signature:", then the signature
        sig = next((ln for ln in lines[reasons[0] + 1:] if ln), "")
        what = what[:-1] + (f" {sig[3:].strip()}" if sig.startswith(">>>") else "")
    uncalled = _UNCALLED.search(what)  # a view method read as a value: ``if view.base_rest:``
    if uncalled:
        from sim.kernel.view import uncalled as uncalled_text

        what = uncalled_text(uncalled["name"])
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # sim/

    def yours(m):
        """The file of match ``m`` (absolute), if it is your code's, else None."""
        if m is None or m["path"].startswith("<"):
            return None
        path = os.path.abspath(m["path"])  # numba names a file relative to the working folder
        mine = not path.startswith(package + os.sep) and f"{os.sep}site-packages{os.sep}" not in path
        return path if mine else None

    where = ""
    for i, ln in enumerate(lines):  # a block 'File "...", line N:', its code, and a caret under it
        path = yours(_FILE_LINE.match(ln))
        if path:
            caret = next((j for j in range(i + 1, min(i + 8, len(lines))) if lines[j] == "^"), None)
            where = f" at {path}, line {_FILE_LINE.match(ln)['line']}" + (f" ({lines[caret - 1]})" if caret else "")
            break
    else:  # a lowering error says only 'During: lowering "..." at PATH (N)'
        path = next(((p, m["line"]) for m in map(_AT_LINE.search, lines) if (p := yours(m))), None)
        where = f" at {path[0]}, line {path[1]}" if path else ""
    names = ", ".join(sorted(decisions))
    text = f"KernelStrategy decisions ({names}) do not compile{where}: {what}"
    if any(s in message for s in _NEEDS_RUNTIME):
        text += ("; the kernel runs without numba's runtime, so code it calls cannot create an array, a list,"
                 " a dict or a string, nor return a slice of an array: write into an array the decision is"
                 " handed, or return an index")
    return text


class KernelStrategy:
    """A built-in strategy with some decisions replaced by your ``@njit`` functions (kernel only)."""

    def __init__(self, base: str = "heuristic", *, name: str | None = None, params: dict | None = None, **decisions):
        """Check the decisions and resolve the base strategy."""
        unknown = set(decisions) - set(DECISIONS)
        if unknown:
            raise ValueError(f"unknown decision(s) {sorted(unknown)}; replaceable: {', '.join(DECISIONS)}")
        if not decisions:
            raise ValueError("give at least one decision function, e.g. token=my_token")
        for k, f in decisions.items():
            if not isinstance(f, CPUDispatcher):
                raise ValueError(f"decision {k!r} must be a numba @njit function, got {type(f).__name__}")
            want = ("view", *SIGNATURES[k])
            got = tuple(inspect.signature(f.py_func).parameters)
            if len(got) != len(want):
                raise ValueError(f"decision {k!r} takes {len(want)} arguments ({', '.join(want)}); "
                                 f"{f.py_func.__name__} takes {len(got)} ({', '.join(got)})")
        from sim.run import make_team, per_player_count  # a registered name -> its strategy object

        if isinstance(base, str) and per_player_count(base):
            raise ValueError(f"KernelStrategy: base {base!r} has one parameter set per player count; "
                             f"use base='heuristic' with params=strategies.tuned.tuned_params(players)")

        if isinstance(base, str) and "," in base:
            raise ValueError(f"KernelStrategy: base {base!r} names a mixed team; a KernelStrategy has one base "
                             "strategy, and plays every seat")
        self.base = make_team(base, 1, params)[0]
        self.decisions = dict(decisions)
        pairing_key(self.decisions)  # refuses what the key cannot fingerprint, before any game
        self._name = name
        self._batch = None  # (key, batch function)

    @property
    def name(self) -> str:
        """Its label: the name it was given, else its base's (with the parameters it was given; a base given as
        an object by its own name), each replaced decision with its function, and a digest of the code they run
        and what it reads (``heuristic[pool_target=5]+token=brave_token@3f9a1c``), worked out when asked: two
        strategies that play other code never share a label, ``module.T = 1`` set since included."""
        if self._name:
            return self._name
        parts = "+".join(f"{k}={self.decisions[k].py_func.__name__}" for k in sorted(self.decisions))
        return f"{self.base.name}+{parts}@{decisions_digest(self.decisions)[:6]}"

    def batch_function(self):
        """The compiled batch function for this pairing (loaded from disk or compiled on first use).

        The key is computed again at each call: after a change to what the decisions read
        (``module.T = 1``), the strategy plays the pairing of the new values, not the one
        compiled before.
        """
        key = pairing_key(self.decisions)
        if self._batch is None or self._batch[0] != key:
            self._batch = (key, compile_batch_function(self.decisions, key))
        return self._batch[1]

    def refusal(self, e: BaseException) -> ValueError | None:
        """``e`` as the error a user sees when it is an adapter's refusal of an illegal answer: the
        readable engine's ``StrategyError``, naming this strategy (the compiled code that raised it
        knows no name: the pairing key leaves the name out, so renaming does not recompile); None
        for any other error."""
        from sim.rules.errors import StrategyError

        if type(e) is ValueError and str(e).startswith(REFUSED):
            return StrategyError(f"strategy {self.name!r}: {e}")
        if type(e) is ValueError and str(e).startswith(VIEW_REFUSED):  # the view's: the readable engine's words
            return StrategyError(f"strategy {self.name!r}: {str(e)[len(VIEW_REFUSED):]}")
        from numba.core.errors import NumbaError

        if isinstance(e, NumbaError):  # the pairing did not compile: numba's pages, said in a few lines
            return StrategyError(f"strategy {self.name!r}: {compile_failure(str(e), self.decisions)}")
        return None

    def params(self) -> dict:
        """The base strategy's parameters and the replaced decisions (recorded with results)."""
        return {"base": self.base.name, **self.base.params(), "decisions": sorted(self.decisions),
                "code": decisions_digest(self.decisions)}
