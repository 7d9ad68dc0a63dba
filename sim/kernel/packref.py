"""The content bundle as one numba StructRef: compiled code passes a single pointer.

A namedtuple of ~80 arrays (``sim.kernel.layout.Pack``) is a fine Python object,
but every jitted function taking it compiles ~1.5 s slower (numba flattens the
tuple into hundreds of arguments). :func:`kernel_pack` copies a ``Pack`` into a
:class:`PackRef` with the same attribute names, so kernel code reads
``pk.villain_advance`` either way. Under ``NUMBA_DISABLE_JIT=1`` the namedtuple
itself is used. The fields and their types come from ``sim.kernel.layout.BUNDLE``.

A game's context (``sim.kernel.layout.Context``: bundle, settings, state, streams,
strategy) is passed the same way, as a :class:`ContextRef`: as a namedtuple every
kernel call would pass its ~30 words and the kernel compiled ~1.5 s slower.
"""

from __future__ import annotations

import hashlib

import numpy as np
from llvmlite import ir
from numba import config, njit, types
from numba.core import cgutils, imputils
from numba.core.datamodel import default_manager, models
from numba.core.extending import infer_getattr, intrinsic, lower_getattr_generic
from numba.core.typing.templates import AttributeTemplate
from numba.experimental import structref

from sim.jit import JIT_OPTIONS
from sim.kernel.layout import BUNDLE, Context


class RefType(types.StructRef):
    """numba type of a kernel bundle: a StructRef with a short name."""

    prefix = "Ref"

    def __init__(self, fields):
        """A bundle type with a short name (see the comment)."""
        super().__init__(fields)
        # numba names a StructRef type after all its fields (~8 KB here), and that name
        # is mangled into the symbol of every kernel function and call: a short name
        # that still identifies the fields keeps the compiled code's symbols small
        digest = hashlib.sha256(repr(self._fields).encode()).hexdigest()[:16]
        self.name = f"{self.prefix}_{digest}"

    def preprocess_fields(self, fields):
        """Field types without literal values (one type per field)."""
        return tuple((name, types.unliteral(typ)) for name, typ in fields)


class PackType(RefType):
    """numba type of the content bundle."""

    prefix = "PackType"


class ContextType(RefType):
    """numba type of a game's context (sim.kernel.layout.Context)."""

    prefix = "ContextType"


# Registered by hand rather than with ``structref.register``: numba's attribute getter asks
# the runtime (NRT) for the payload pointer, and the kernel is compiled without the runtime
# (``sim.jit.KERNEL_OPTIONS``). The payload pointer is the fourth word of numba's MemInfo
# (``refct, dtor, dtor_info, data, ...``, as in ``numba.core.runtime.nrtdynmod``).
_WORD = ir.IntType(64)
_PTR = ir.IntType(8).as_pointer()
_MEMINFO = ir.LiteralStructType([_WORD, _PTR, _PTR, _PTR, _WORD])


def _invariant(builder, load):
    """Tag a load as reading memory that never changes while kernel code runs (see _getattr)."""
    load.set_metadata("invariant.load", builder.module.add_metadata([]))
    return load


def _payload_pointer(context, builder, typ, val, invariant=False):
    """(pointer to the payload struct behind a StructRef value, its data model); no runtime call."""
    ref = cgutils.create_struct_proxy(typ)(context, builder, value=val)
    mi = builder.bitcast(ref.meminfo, _MEMINFO.as_pointer())
    data = builder.load(cgutils.gep_inbounds(builder, mi, 0, 3))
    if invariant:
        _invariant(builder, data)
    dm = context.data_model_manager[typ.get_data_type()]
    return builder.bitcast(data, dm.get_value_type().as_pointer()), dm


def _payload(context, builder, typ, val):
    """The bundle's payload struct behind a StructRef value (what _fill stores into)."""
    ptr, _dm = _payload_pointer(context, builder, typ, val)
    return cgutils.create_struct_proxy(typ.get_data_type())(context, builder, ref=ptr)


def _getattr(context, builder, typ, val, attr):
    """Lower ``ref.<field>``: load the field from the payload (a borrowed reference).

    A bundle or context is filled once, before kernel code reads it, and never written
    again; its loads say so (``!invariant.load``), so LLVM keeps a field's data pointer
    and shape in registers across the kernel's stores to the state vector instead of
    loading them again after each store (it cannot tell that a store to ``st`` leaves
    the payload alone).
    """
    ptr, dm = _payload_pointer(context, builder, typ, val, invariant=True)
    member = _invariant(builder, builder.load(cgutils.gep_inbounds(builder, ptr, 0, dm.get_field_position(attr))))
    return imputils.impl_ret_borrowed(context, builder, typ.field_dict[attr], member)


class PackRef(structref.StructRefProxy):
    """Python handle of a compiled content bundle (read it through the namedtuple instead)."""


class ContextRef(structref.StructRefProxy):
    """Python handle of a compiled game context."""


for _cls, _proxy in ((PackType, PackRef), (ContextType, ContextRef)):
    default_manager.register(_cls, models.StructRefModel)

    @infer_getattr
    class _Attributes(AttributeTemplate):
        key = _cls

        def generic_resolve(self, typ, attr):
            """The type of ``ref.<field>``."""
            if attr in typ.field_dict:
                return typ.field_dict[attr]

    lower_getattr_generic(_cls)(_getattr)
    structref.define_boxing(_cls, _proxy)

# the bundle's fields, from the one table of sim.kernel.layout
FIELDS = tuple((name, types.Array(getattr(types, dtype), ndim, "C")) for name, dtype, ndim in BUNDLE)
PACK_TYPE = PackType(list(FIELDS))
_INTS = types.Array(types.int64, 1, "C")
CONTEXT_TYPE = ContextType(
    [("pk", PACK_TYPE), ("cfg", _INTS), ("st", _INTS), ("rs", _INTS), ("sid", _INTS),
     ("prm", types.Array(types.float64, 2, "C"))]
)
assert tuple(name for name, _ in CONTEXT_TYPE._fields) == Context._fields


@intrinsic
def _fill(typingctx, ref_t, nt_t):
    """Store each member of the tuple ``nt`` in the fresh bundle ``ref``, in field order."""

    def codegen(context, builder, sig, args):
        """Store the fields one by one."""
        # the function that fills a payload is never inlined: its stores then precede, in
        # another function, every load that _getattr marks invariant (none can move above them)
        builder.function.attributes.add("noinline")
        ref, nt = args
        payload = _payload(context, builder, sig.args[0], ref)
        for i, (name, typ) in enumerate(ref_t._fields):
            value = context.cast(builder, builder.extract_value(nt, i), nt_t.types[i], typ)
            context.nrt.incref(builder, typ, value)  # the fresh payload holds nulls: nothing to release
            setattr(payload, name, value)
        return context.get_dummy_value()

    return types.none(ref_t, nt_t), codegen


@njit(**JIT_OPTIONS)
def _to_ref(nt):
    """A new compiled bundle holding the namedtuple's arrays."""
    p = structref.new(PACK_TYPE)
    _fill(p, nt)
    return p


@njit(**JIT_OPTIONS)
def _to_context(pk, cfg, st, rs, sid, prm):
    """A new compiled game context holding these parts (one pointer for every kernel call)."""
    c = structref.new(CONTEXT_TYPE)
    _fill(c, (pk, cfg, st, rs, sid, prm))
    return c


# what simulate_batch builds its context with (the namedtuple itself when JIT is off)
new_context = Context if config.DISABLE_JIT else _to_context


def kernel_context(pk, cfg, st, rs, sid, prm):
    """A game context to hand to jitted kernel code (the namedtuple when JIT is off).

    ``sid``/``prm`` are per seat (``sim.kernel.layout.team_vectors``); one strategy id
    and one parameter vector are given to every seat.
    """
    from sim.content.constants import MAX_PLAYERS

    sid = np.asarray(sid, dtype=np.int64)
    prm = np.asarray(prm, dtype=np.float64)
    if sid.ndim == 0:
        sid = np.full(MAX_PLAYERS, int(sid), dtype=np.int64)
    if prm.ndim == 1:
        prm = np.ascontiguousarray(np.broadcast_to(prm, (MAX_PLAYERS, prm.shape[0])))
    return new_context(pk, cfg, st, rs, sid, prm)


def kernel_pack(pk):
    """The bundle to hand to jitted kernel code: a PackRef (the namedtuple when JIT is off)."""
    if config.DISABLE_JIT:
        return pk
    return _to_ref(pk)
