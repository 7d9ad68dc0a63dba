"""The kernel's data layout: every table mirrors the reference's dataclasses, and the
derived offsets never overlap (with bounds checks off, an overlap would silently
overwrite the next field)."""

from dataclasses import fields

import numpy as np

from sim.content import Content
from sim.kernel import layout
from sim.kernel.decks import work
from sim.rules.game import GameRecord
from sim.rules.state import GameState, Player, Stats
from tests.kernel_support import content_and_pack

# GameState fields that are machinery or kept elsewhere, not board state
NOT_MIRRORED = {"content", "settings", "stats", "rng", "strategies", "trace"}


def _names(table):
    return [f.name for f in table if f.name]


def test_state_tables_mirror_game_state():
    mirrored = _names(layout.STATE) + _names(layout.REGIONS)
    assert len(mirrored) == len(set(mirrored))
    assert set(mirrored) == {f.name for f in fields(GameState)} - NOT_MIRRORED


def test_player_table_mirrors_player():
    names = _names(layout.PLAYER)
    assert len(names) == len(set(names))
    assert set(names) == {f.name for f in fields(Player)} - {"seat"}  # the seat is the block's index


def test_stats_and_row_mirror_stats_and_game_record():
    assert layout.STAT_NAMES == tuple(f.name for f in fields(Stats))
    record = [f.name for f in fields(GameRecord)]
    assert set(layout.ROW_TEXT) <= set(record)  # the text columns exist, and are rebuilt from blocks
    assert list(layout.ROW_FIELDS) == [n for n in record if n not in layout.ROW_TEXT]
    assert {name for name, _ in layout.ROW_BLOCKS} <= set(layout.ROW_TEXT)
    # every counter reaches the row, each in its own column
    stat_of_row = {layout.ROW_STAT_OF.get(n, n) for n in layout.ROW_FIELDS}
    assert set(layout.STAT_NAMES) <= stat_of_row
    assert len(set(layout.ROW_STAT_ROWS.tolist())) == len(layout.STAT_NAMES) == len(layout.ROW_STAT_SRC)
    for row, src in zip(layout.ROW_STAT_ROWS, layout.ROW_STAT_SRC, strict=True):
        stat = layout.STAT_NAMES[src - layout.S_STATS]
        assert layout.ROW_STAT_OF.get(layout.ROW_FIELDS[row], layout.ROW_FIELDS[row]) == stat


def test_bundle_lists_content_arrays_with_their_dimensions():
    c, pk = content_and_pack()
    content_fields = {f.name for f in fields(Content)}
    assert pk._fields == tuple(name for name, _, _ in layout.BUNDLE)
    for name, dtype, ndim in layout.BUNDLE:
        a = getattr(pk, name)
        assert (a.ndim, str(a.dtype), a.flags.c_contiguous) == (ndim, dtype, True), name
        if name in content_fields:
            assert np.array_equal(a, np.asarray(getattr(c, name))), name


def _spans(pk):
    """(start, end, name) of every slot the tables give out, scalars and regions."""
    out = [(layout.OFFSETS[f.const], layout.OFFSETS[f.const] + f.size, f.const) for f in layout.STATE]
    out.append((layout.S_STATS, layout.N_SCALARS, "stats"))
    for f in layout.REGIONS:
        i = layout.OFFSETS[f.const]
        out.append((int(pk.lay[i]), int(pk.lay[i] + pk.region_size[i]), f.const))
    return sorted(out)


def test_regions_tile_the_state_vector_without_overlap():
    _, pk = content_and_pack()
    spans = _spans(pk)
    assert spans[0][0] == 0
    for (a0, a1, a), (b0, _b1, b) in zip(spans, spans[1:], strict=False):
        assert a0 <= a1 == b0, f"{a} [{a0}, {a1}) and {b} start {b0}"
    assert spans[-1][1] == pk.lay[layout.L_SIZE] == layout.new_state(pk).shape[0]


def test_player_block_fields_do_not_overlap():
    _, pk = content_and_pack()
    stride = int(pk.lay[layout.L_PSTRIDE])
    slots = []
    for f in layout.PLAYER:
        n = f.size if isinstance(f.size, int) else stride - layout.OFFSETS[f.const]
        slots += [(layout.OFFSETS[f.const] + k, f.const) for k in range(n)]
        if f.count:
            slots.append((layout.OFFSETS[f.count], f.count))
    assert sorted(s for s, _ in slots) == list(range(stride))
    assert pk.lay[layout.L_PLAYERS + 0] + 6 * stride <= pk.lay[layout.L_SIZE]


def test_scratch_regions_come_from_the_table():
    c, pk = content_and_pack()
    env = layout.sizes(c)
    st = layout.new_state(pk)
    plain_work = getattr(work, "py_func", work)  # the compiled one may only be inlined
    for f in layout.REGIONS:
        if f.kind == "scratch":
            view = plain_work(pk, st, layout.OFFSETS[f.const])
            assert view.shape == (layout.shape(f.size, env),), f.const


def test_row_columns_by_name():
    c, pk = content_and_pack()
    rows = np.arange(3 * layout.row_width(pk)).reshape(3, -1)
    cols = layout.row_columns(rows, c.n_henchmen)
    assert list(cols)[: len(layout.ROW_FIELDS)] == list(layout.ROW_FIELDS)
    assert cols["seed"].tolist() == rows[:, layout.R_SEED].tolist()
    assert cols["top_secret_played"].tolist() == rows[:, layout.N_ROW - 1].tolist()
    assert cols["henchman_levels"].shape == (3, c.n_henchmen)
    assert cols["characters"][:, -1].tolist() == rows[:, -1].tolist()


def test_every_kernel_function_says_what_it_does():
    import ast
    from pathlib import Path

    import sim.kernel

    missing = []
    for path in sorted(Path(sim.kernel.__file__).parent.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef) and not ast.get_docstring(node):
                missing.append(f"{path.name}:{node.lineno} {node.name}")
    assert not missing, "kernel functions without a docstring: " + ", ".join(missing)


def _kernel_trees():
    import ast
    from pathlib import Path

    import sim.kernel

    for path in sorted(Path(sim.kernel.__file__).parent.glob("*.py")):
        yield path.name, ast.parse(path.read_text())


def test_kernel_imports_no_strategies_and_no_private_rules_names():
    import ast

    bad = []
    for name, tree in _kernel_trees():
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                bad += [f"{name}: import {a.name}" for a in node.names if a.name.split(".")[0] == "strategies"]
            elif isinstance(node, ast.ImportFrom) and node.module:
                if node.module.split(".")[0] == "strategies":
                    bad.append(f"{name}: from {node.module}")
                if node.module.startswith("sim.rules"):
                    bad += [f"{name}: {node.module}.{a.name}" for a in node.names if a.name.startswith("_")]
    assert not bad, bad


def test_only_the_strategy_module_looks_at_the_strategy_id():
    import ast

    readers = []
    for name, tree in _kernel_trees():
        if name in ("strategy.py", "layout.py", "batch.py", "game.py", "packref.py", "__init__.py"):
            continue  # the decisions; building the vector; handing it to the context
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr == "sid":
                readers.append(f"{name}:{node.lineno}")
            if isinstance(node, ast.Name) and node.id in ("sid", "RANDOM", "HEURISTIC"):
                readers.append(f"{name}:{node.lineno}")
    assert not readers, "engine code branches on the strategy id at " + ", ".join(readers)


# sim modules that kernel code imports at its top without their source being part of the cache stamp,
# and why nothing of them is compiled in as a constant
_READ_WHEN_PACKING = {
    ("sim.content", "Content"): "layout.pack reads a Content's arrays at run time; nothing of the class is compiled in",
    ("sim.rules.errors", "is_index"): "the readable engine's PlayerView and custom.py's plain answer checks call it; "
                                      "no compiled code does",
    ("sim.rules.errors", "is_integer"): "custom.py's plain answer checks call it; no compiled code does",
}


def test_what_the_compiled_kernel_freezes_is_in_the_cache_stamp():
    """numba keys a cached function on its own file only. A module-level name a kernel module (or a
    hashed twin) imports from elsewhere in sim/ may be compiled in as a constant (Stats and GameRecord
    fix the state and row offsets), so its source must be in sim._cache.sources_hash(): else an edit of
    it leaves a stale kernel that writes its columns under the wrong names."""
    import ast
    import importlib.util

    from sim import _cache

    hashed = {"sim." + n[:-3].replace("/", ".") for n in _cache.HASHED}
    classes = {"sim." + n[:-3].replace("/", "."): set(c) for n, c in _cache.HASHED_DEFINITIONS.items()}
    sources = [(p.name, p) for p in sorted(_cache.KERNEL.glob("*.py"))] + [(n, _cache.SIM / n) for n in _cache.HASHED]
    unstamped, checked = [], 0
    for name, path in sources:
        for node in ast.parse(path.read_text()).body:  # module level only: a function's imports run when called
            if isinstance(node, ast.Import):
                unstamped += [f"{name}: import {a.name} (import names from it instead)" for a in node.names
                              if a.name.split(".")[0] == "sim"]
            if not isinstance(node, ast.ImportFrom) or not (node.module or "").startswith("sim"):
                continue
            for alias in node.names:
                checked += 1
                sub = f"{node.module}.{alias.name}"
                try:
                    is_module = importlib.util.find_spec(sub) is not None
                except ModuleNotFoundError:  # the parent is a module, not a package
                    is_module = False
                module, names = (sub, None) if is_module else (node.module, {alias.name})
                if module.startswith("sim.kernel") or module in hashed:
                    continue
                if names and names <= classes.get(module, set()):
                    continue
                if names and (module, alias.name) in _READ_WHEN_PACKING:
                    continue
                unstamped.append(f"{name}: from {node.module} import {alias.name}")
    assert checked > 50
    assert not unstamped, ("add these to sim/_cache.py's HASHED (or HASHED_DEFINITIONS), or to _READ_WHEN_PACKING "
                           f"with the reason nothing of them is compiled in: {unstamped}")


def test_the_cache_stamp_changes_with_the_row_dataclass_but_not_with_the_turn_loop(tmp_path, monkeypatch):
    from sim import _cache

    fake = tmp_path / "sim"
    (fake / "rules").mkdir(parents=True)
    (fake / "content").mkdir()
    (fake / "kernel").mkdir()
    for n in _cache.HASHED + tuple(_cache.HASHED_DEFINITIONS):
        (fake / n).write_bytes((_cache.SIM / n).read_bytes())
    monkeypatch.setattr(_cache, "SIM", fake)
    monkeypatch.setattr(_cache, "KERNEL", fake / "kernel")
    base = _cache.sources_hash()
    game = fake / "rules" / "game.py"
    text = game.read_text()
    game.write_text(text + "\n\ndef an_edit_of_the_turn_loop():\n    return 1\n")
    assert _cache.sources_hash() == base
    record = text[text.index("class GameRecord"):]
    first, second = [ln for ln in record.splitlines()[1:] if ln.startswith("    ") and ":" in ln and "=" not in ln
                     and not ln.strip().startswith(('"', "#"))][:2]
    game.write_text(text.replace(first + "\n" + second, second + "\n" + first, 1))
    assert game.read_text() != text
    assert _cache.sources_hash() != base
    game.write_text(text.replace("class GameRecord", "class GameRow"))
    try:
        _cache.sources_hash()
    except RuntimeError as e:
        assert "GameRecord" in str(e)
    else:
        raise AssertionError("a renamed GameRecord went unnoticed")
