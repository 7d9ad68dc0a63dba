"""Custom strategies named by module path in specs and bands files: run, resume, compare, check."""

import hashlib
import json
import textwrap

import pytest

import sim
from sim.bands import BandsError, run_check
from sim.compare import compare_run
from sim.experiments import SpecError, load_spec
from sim.study import run_study

MODULE = '''
from strategies import HeuristicStrategy


class Wary(HeuristicStrategy):
    """The heuristic, except that it always takes the last token choice."""

    def token(self, view, choices):
        return len(choices) - 1


def wary(**params):
    return Wary(name="wary", **params)
'''

SPEC = """
[experiment]
name = "custom"
seed = 4
games = 30
batch = 10
engine = "reference"

[grid]
players = [2]
strategies = ["heuristic", "wary"]

[strategy.wary]
module = "my_wary_strats:wary"
params = { pool_target = 5 }

[compare]
baseline = { strategy = "heuristic" }
"""


@pytest.fixture
def module(tmp_path, monkeypatch):
    import sys

    from strategies import modules

    path = tmp_path / "my_wary_strats.py"
    path.write_text(MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    # each test has its own copy of the module: import it afresh
    monkeypatch.delitem(sys.modules, "my_wary_strats", raising=False)
    monkeypatch.delitem(modules._IMPORTED, "my_wary_strats", raising=False)
    return path


def _folder_hash(module) -> str:
    """The recorded source hash, by hand: every Python file in the module's folder (no package), by name."""
    h = hashlib.sha256()
    for f in sorted(module.parent.glob("*.py")):
        h.update(f.name.encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


def _spec(tmp_path, text=SPEC):
    p = tmp_path / "custom.toml"
    p.write_text(textwrap.dedent(text))
    return load_spec(p)


def test_a_spec_names_a_custom_strategy_by_module_path_runs_resumes_and_compares(tmp_path, module):
    spec = _spec(tmp_path)
    out = tmp_path / "out"
    first = run_study(spec, out, progress=False, max_batches=2)
    assert not first.finished and len(first.computed) == 2
    done = run_study(spec, out, progress=False)
    assert done.finished and len(done.skipped) == 2 and len(done.computed) == 4  # resumed, not replayed
    table, _ = compare_run(out)
    row = table.filter(table["strategy"] == "wary").row(0, named=True)
    from my_wary_strats import Wary

    want = sim.simulate(players=2, games=30, seed=4, strategy=Wary(name="wary", pool_target=5), engine="reference")
    assert row["win_rate"] == pytest.approx(want["win"].mean())
    plain = sim.simulate(players=2, games=30, seed=4, strategy="heuristic", params={"pool_target": 5})
    assert not want.drop("strategy").equals(plain.drop("strategy"))  # the override really played
    meta = json.loads((out / "metadata.json").read_text())
    from sim.manifest import read_metadata

    assert read_metadata(out)["strategy_modules"] == meta["strategy_modules"]
    import pyarrow.parquet as pq

    from sim.manifest import metadata_from_parquet

    pmeta = metadata_from_parquet(pq.read_schema(out / "summary.parquet").metadata)
    assert pmeta["strategy_modules"] == meta["strategy_modules"]  # the same field in the Parquet file
    recorded = meta["strategy_modules"]["wary"]
    assert recorded["module"] == "my_wary_strats:wary"
    assert recorded["source_hash"] == _folder_hash(module)


def test_an_edited_module_replays_its_batches(tmp_path, module):
    spec = _spec(tmp_path)
    out = tmp_path / "out"
    assert run_study(spec, out, progress=False).finished
    module.write_text(MODULE.replace("len(choices) - 1", "0  # ignore every token") + "\n# edited\n")
    again = run_study(spec, out, progress=False)
    wary = "p2_wary_standard_default_default"  # its cell replays; the heuristic's batches decide nothing of it
    assert again.finished and sorted(again.computed) == [(wary, b) for b in range(3)] and len(again.skipped) == 3
    assert any("module strategy wary" in n for n in again.notices)
    meta = json.loads((out / "metadata.json").read_text())
    assert meta["strategy_modules"]["wary"]["source_hash"] == _folder_hash(module)


def test_an_edited_tuned_toml_replays_a_module_strategys_batches(tmp_path, module, monkeypatch):
    """A module may build ``tuned`` (``strategies.make("tuned", ...)``), which reads strategies/tuned.toml: the
    file's digest is in its cells' key, so an edit of it replays them, saying why."""
    import shutil

    from strategies import tuned

    path = tmp_path / "tuned.toml"
    shutil.copy(tuned.TUNED_PATH, path)
    monkeypatch.setattr(tuned, "TUNED_PATH", path)
    spec = _spec(tmp_path)
    out = tmp_path / "out"
    assert run_study(spec, out, progress=False).finished
    path.write_text(path.read_text() + "\n# edited\n")
    again = run_study(spec, out, progress=False)
    wary = "p2_wary_standard_default_default"
    assert again.finished and sorted(again.computed) == [(wary, b) for b in range(3)]
    assert any("an edited strategies/tuned.toml, from which the module strategy wary may build tuned" in n
               for n in again.notices), again.notices
    # a key an older version wrote, without the tuned file's digest, is not said to have seen it edited
    import sim.study

    kpath = out / ".state" / wary / "key.json"
    key = json.loads(kpath.read_text())
    del key["strategy"]["plays"]["tuned_toml"]
    key["key"] = sim.study._digest({k: v for k, v in key.items() if k != "key"})
    kpath.write_text(json.dumps(key))
    older = run_study(spec, out, progress=False)
    assert older.finished and sorted(older.computed) == [(wary, b) for b in range(3)]
    assert any("a key that did not record strategies/tuned.toml for the module strategy wary" in n
               for n in older.notices), older.notices
    assert not any("edited strategies/tuned.toml" in n for n in older.notices)


HELPED = '''
from my_wary_helpers import pick
from strategies import HeuristicStrategy


class Wary(HeuristicStrategy):
    def token(self, view, choices):
        return pick(choices)


def wary(**params):
    return Wary(name="wary", **params)
'''


def test_an_edited_helper_module_replays_its_batches_with_the_new_code(tmp_path, module, monkeypatch):
    """The module imports a helper beside it: an edit of the helper alone changes the recorded source
    hash, replays every batch of the strategy's cells, and the replay plays the edited helper, not the one
    imported before."""
    import sys

    monkeypatch.delitem(sys.modules, "my_wary_helpers", raising=False)
    module.write_text(HELPED)
    helper = tmp_path / "my_wary_helpers.py"
    helper.write_text("def pick(choices):\n    return len(choices) - 1\n")
    spec = _spec(tmp_path)
    out = tmp_path / "out"
    assert run_study(spec, out, progress=False).finished
    before = json.loads((out / "metadata.json").read_text())["strategy_modules"]["wary"]["source_hash"]
    assert before == _folder_hash(module)
    helper.write_text("def pick(choices):\n    return 0\n")
    again = run_study(spec, out, progress=False)
    wary = "p2_wary_standard_default_default"
    assert again.finished and sorted(again.computed) == [(wary, b) for b in range(3)] and len(again.skipped) == 3
    assert any("module strategy wary" in n for n in again.notices)
    after = json.loads((out / "metadata.json").read_text())["strategy_modules"]["wary"]["source_hash"]
    assert after == _folder_hash(module) != before
    from strategies import HeuristicStrategy

    class FirstToken(HeuristicStrategy):
        def token(self, view, choices):
            return 0

    class LastToken(HeuristicStrategy):
        def token(self, view, choices):
            return len(choices) - 1

    table, _ = compare_run(out)
    row = table.filter(table["strategy"] == "wary").row(0, named=True)
    want, old = (sim.simulate(players=2, games=30, seed=4, strategy=cls(name="wary", pool_target=5), engine="reference")
                 for cls in (FirstToken, LastToken))
    assert not want.equals(old)  # the two helpers play other games
    assert row["win_rate"] == pytest.approx(want["win"].mean())
    import polars as pl

    played = pl.read_parquet(out / "games.parquet").filter(pl.col("strategy") == "wary").sort("game")
    assert played["turns"].to_list() == want["turns"].to_list() != old["turns"].to_list()


def _wary_games(first: bool):
    """The games of the spec's wary cell as a fresh process plays them: the first token, or the last."""
    from strategies import HeuristicStrategy

    class Wary(HeuristicStrategy):
        def token(self, view, choices):
            return 0 if first else len(choices) - 1

    return sim.simulate(players=2, games=30, seed=4, strategy=Wary(name="wary", pool_target=5), engine="reference")


def _played_wary(out):
    import polars as pl

    return pl.read_parquet(out / "games.parquet").filter(pl.col("strategy") == "wary").sort("game")


def _assert_the_run_played_the_file(tmp_path, module):
    """A run of the spec records the source file's hash and plays its games (the first token), not the stale
    version's (the last token)."""
    out = tmp_path / "out"
    assert run_study(_spec(tmp_path), out, progress=False).finished
    assert json.loads((out / "metadata.json").read_text())["strategy_modules"]["wary"]["source_hash"] == \
        _folder_hash(module)
    want, stale = _wary_games(first=True), _wary_games(first=False)
    assert _played_wary(out)["turns"].to_list() == want["turns"].to_list() != stale["turns"].to_list()


def test_a_module_imported_before_the_first_run_and_edited_since_plays_the_file(tmp_path, module):
    """A notebook imported the module, then it was edited: the run imports it again, so it plays the file whose
    hash it records, never the version imported before (which a later run would have resumed as the file's)."""
    import importlib

    old = importlib.import_module("my_wary_strats")  # the last token
    module.write_text(MODULE.replace("len(choices) - 1", "0  # the first token"))
    _assert_the_run_played_the_file(tmp_path, module)
    import sys

    assert sys.modules["my_wary_strats"] is not old  # imported again; the notebook's own object is left as it was


def test_a_module_changed_in_this_process_after_it_was_loaded_is_refused(tmp_path, module, monkeypatch):
    """After a first run, a notebook's ``my_wary_strats.LIMIT = 3``, a method replaced, a table or numpy array
    changed in place or a strategy object's attribute set would play under the files' hash, which the results record: refused, naming what changed, by the next load
    and by a run; put back as it was (or an equal number), it plays. A helper module its code imported later counts
    from then on."""
    import sys

    from strategies import modules

    module.write_text(MODULE + "\nTABLE = {'a': [1, 2]}\nRATE = 0.5\nGRID = [object()]\n"
                      "import enum\nclass Mark(enum.IntFlag):\n    A = 1\n    B = 2\n"
                      "import numpy\nARR = numpy.array([1, 2])\nBOXES = numpy.array([[1], 'a'], dtype=object)\n"
                      "brave = Wary(name='brave', pool_target=3)\n")
    (tmp_path / "my_wary_later.py").write_text("STEP = 2\n")
    path = "my_wary_strats:wary"
    first = modules.load(path, {"pool_target": 5})
    m = sys.modules["my_wary_strats"]
    changes = [
        (lambda mp: mp.setattr(m.Wary, "token", lambda self, view, choices: 0), r"my_wary_strats\.Wary\.token"),
        (lambda mp: mp.setattr(m, "LIMIT", 3, raising=False), r"my_wary_strats\.LIMIT"),
        (lambda mp: mp.setitem(m.TABLE, "a", [1, 2, 3]), r"my_wary_strats\.TABLE"),
        (lambda mp: mp.setattr(m, "RATE", 0.25), r"my_wary_strats\.RATE"),
        (lambda mp: mp.setattr(m, "GRID", [object()]), r"my_wary_strats\.GRID"),
        (lambda mp: mp.delattr(m, "wary"), r"my_wary_strats\.wary"),
        # a strategy object's attributes: its parameters replaced, an attribute added
        (lambda mp: mp.setattr(m.brave, "p", type(m.brave.p)(pool_target=9)), r"my_wary_strats\.brave\.p"),
        (lambda mp: mp.setattr(m.brave, "extra", 1, raising=False), r"my_wary_strats\.brave\.extra"),
    ]
    assert m.Mark(3) == m.Mark.A | m.Mark.B  # the enum caches a new member in its class: not a change
    assert modules.load(path, {"pool_target": 5}) is first
    for change, named in changes:
        with monkeypatch.context() as mp:
            change(mp)
            with pytest.raises(modules.ModuleChanged, match=rf"module strategy {path}: {named} changed in this "
                                                            r"process since it was imported from its files"):
                modules.load(path, {"pool_target": 5})
        assert modules.load(path, {"pool_target": 5}) is first  # put back: played
    for array, change, undo in ((m.ARR, lambda a: a.__setitem__(0, 5), lambda a: a.__setitem__(0, 1)),
                                (m.BOXES, lambda a: a[0].append(2), lambda a: a[0].pop())):  # (an object array's list)
        change(array)  # a numpy array changed in place
        try:
            with pytest.raises(modules.ModuleChanged, match=r"my_wary_strats\.(ARR|BOXES) changed"):
                modules.load(path, {"pool_target": 5})
        finally:
            undo(array)
        assert modules.load(path, {"pool_target": 5}) is first
    with monkeypatch.context() as mp:
        mp.setattr(m, "RATE", float("0." + "5"))  # another object, equal: the same value plays
        mp.setattr(m, "TABLE", {"a": [1, 2]})
        assert modules.load(path, {"pool_target": 5}) is first
        m.TABLE["a"].append(3)  # changed in place, deep down
        with pytest.raises(modules.ModuleChanged, match=r"my_wary_strats\.TABLE changed"):
            modules.load(path, {"pool_target": 5})
    # and a run of a spec naming it is refused before it plays
    spec, out = _spec(tmp_path), tmp_path / "out"
    with monkeypatch.context() as mp:
        mp.setattr(m.Wary, "token", lambda self, view, choices: 0)
        with pytest.raises(ValueError, match=r"my_wary_strats\.Wary\.token changed in this process"):
            run_study(spec, out, progress=False)
    assert not (out / "metadata.json").exists()
    # a helper module the strategy's code imports later is taken as first seen, then watched
    later = __import__("my_wary_later")
    assert modules.load(path, {"pool_target": 5}) is first
    later.STEP = 5
    try:
        with pytest.raises(modules.ModuleChanged, match=r"my_wary_later\.STEP changed"):
            modules.load(path, {"pool_target": 5})
    finally:
        later.STEP = 2
        sys.modules.pop("my_wary_later", None)


def test_a_module_rewritten_within_the_second_at_the_same_size_plays_the_file(tmp_path, module):
    """Python trusts a cached .pyc whose source has the same mtime (whole seconds) and size: a script that rewrites
    a strategy file that fast (here: the same size, the mtime set back) must still play the file it hashes."""
    import importlib.util
    import os
    import py_compile

    # the last token's bytecode cached beside it, as an import writes it (unless PYTHONDONTWRITEBYTECODE is set)
    py_compile.compile(str(module), cfile=importlib.util.cache_from_source(str(module)), doraise=True,
                       invalidation_mode=py_compile.PycInvalidationMode.TIMESTAMP)
    stat = module.stat()
    new = MODULE.replace("len(choices) - 1", f"{'0  # the first':<16}")
    assert len(new) == len(MODULE)
    module.write_text(new)
    os.utime(module, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    _assert_the_run_played_the_file(tmp_path, module)


def test_only_the_strategys_own_modules_skip_the_bytecode_cache(tmp_path, tmp_path_factory, module, monkeypatch):
    """Modules the strategy imports from elsewhere (an installed package, a library folder on the path) keep their
    bytecode cache: compiled afresh each time, matplotlib and pandas had made a load three times slower."""
    import importlib.machinery
    import sys

    lib = tmp_path_factory.mktemp("lib")  # outside the strategy's folder: not its source
    (lib / "my_lib_helper.py").write_text("LAST = True\n")
    monkeypatch.syspath_prepend(str(lib))
    monkeypatch.delitem(sys.modules, "my_lib_helper", raising=False)
    module.write_text("import my_lib_helper\n" + MODULE)
    from strategies import modules

    modules.load("my_wary_strats:wary")
    assert type(sys.modules["my_wary_strats"].__loader__) is modules._SourceLoader
    assert type(sys.modules["my_lib_helper"].__loader__) is importlib.machinery.SourceFileLoader
    del sys.modules["my_lib_helper"]


def test_a_helper_imported_before_the_first_run_and_edited_since_plays_the_file(tmp_path, module, monkeypatch):
    """The same for a helper module beside the strategy's: imported before the first run (the strategy's module
    itself not), then edited, the run plays the edited helper."""
    import importlib
    import sys

    monkeypatch.delitem(sys.modules, "my_wary_helpers", raising=False)
    module.write_text(HELPED)
    helper = tmp_path / "my_wary_helpers.py"
    helper.write_text("def pick(choices):\n    return len(choices) - 1\n")
    importlib.import_module("my_wary_helpers")
    helper.write_text("def pick(choices):\n    return 0  # the first token\n")
    _assert_the_run_played_the_file(tmp_path, module)


def test_a_helper_deleted_since_it_was_imported_is_not_played(tmp_path, module, monkeypatch):
    """A helper the strategy imports, imported before and deleted since, is not played in its absence (its
    source is in no hash): the run cannot import the strategy, as a fresh process could not."""
    import importlib
    import sys

    monkeypatch.delitem(sys.modules, "my_wary_helpers", raising=False)
    module.write_text(HELPED)
    helper = tmp_path / "my_wary_helpers.py"
    helper.write_text("def pick(choices):\n    return len(choices) - 1\n")
    importlib.import_module("my_wary_strats")
    helper.unlink()
    with pytest.raises(SpecError, match=r"strategy\.wary\.module: cannot import 'my_wary_strats'.*my_wary_helpers"):
        _spec(tmp_path)


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A package ``myproj`` whose strategy lives in its subpackage ``strategies`` (the simulator's own package's
    name), with a helper folder linked in from beside it; its modules forgotten afterwards."""
    import sys

    pkg = tmp_path / "myproj"
    (pkg / "strategies").mkdir(parents=True)
    (tmp_path / "shared_helpers").mkdir()
    for f in (pkg / "__init__.py", pkg / "strategies" / "__init__.py", tmp_path / "shared_helpers" / "__init__.py"):
        f.write_text("")
    (tmp_path / "shared_helpers" / "vals.py").write_text("POOL = 2\n")
    (pkg / "helpers").symlink_to(tmp_path / "shared_helpers", target_is_directory=True)
    (pkg / "strategies" / "brave.py").write_text(
        "from myproj.helpers.vals import POOL\nfrom strategies import HeuristicStrategy\n\n\n"
        "def make():\n    return HeuristicStrategy(name='brave', pool_target=POOL)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield pkg
    for name in [n for n in sys.modules if n == "myproj" or n.startswith("myproj.")]:
        del sys.modules[name]


def test_a_subpackage_named_strategies_and_a_linked_helper_folder_are_the_strategys_source(project, tmp_path):
    """Only the simulator's own packages are left out of a strategy's source, not a subpackage of the user's
    that bears one of their names; a helper folder linked into the package is source too (walked once). An edit
    of either changes the hash, so the batches played before are replayed, not reused."""
    import importlib

    from strategies import modules

    path = "myproj.strategies.brave:make"
    before = modules.source_hash(path)
    files = modules.source_files(importlib.import_module("myproj.strategies.brave"))
    assert [f.relative_to(project).as_posix() for f in files] == [
        "__init__.py", "helpers/__init__.py", "helpers/vals.py", "strategies/__init__.py", "strategies/brave.py"]
    (tmp_path / "shared_helpers" / "vals.py").write_text("POOL = 7\n")
    helper_edited = modules.source_hash(path)
    brave = project / "strategies" / "brave.py"
    brave.write_text(brave.read_text().replace("pool_target=POOL", "pool_target=POOL + 1"))
    assert len({before, helper_edited, modules.source_hash(path)}) == 3
    assert modules.load(path).params()["pool_target"] == 8  # the files as they are now


def test_importing_a_module_again_leaves_a_scripts_main_and_installed_packages_alone(tmp_path, module,
                                                                                       monkeypatch):
    """A module outside any package has its folder as source; a module edited between two loads is imported
    again with the modules of that source, but never the script that runs (``__main__``, a file of the folder)
    nor a package installed in an environment below the folder, which no source hash covers."""
    import importlib
    import sys
    import types

    from strategies import modules

    script = tmp_path / "run_me.py"
    script.write_text("# the script that runs the study\n")
    main = types.ModuleType("__main__")
    main.__file__ = str(script)
    monkeypatch.setitem(sys.modules, "__main__", main)
    site = tmp_path / "env" / "lib" / "site-packages"
    site.mkdir(parents=True)
    (site / "my_wary_dep.py").write_text("X = 1\n")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.delitem(sys.modules, "my_wary_dep", raising=False)
    dep = importlib.import_module("my_wary_dep")
    first = modules.load("my_wary_strats:wary")
    module.write_text(MODULE.replace("len(choices) - 1", "0  # the first token"))
    again = modules.load("my_wary_strats:wary")
    assert type(again) is not type(first)  # the edited module played
    assert sys.modules["__main__"] is main and sys.modules["my_wary_dep"] is dep


@pytest.mark.parametrize("after", [4, 6])
def test_a_module_edited_while_a_run_plays_is_refused(tmp_path, module, monkeypatch, after):
    """Edited after the first batch of its cell (4 batches saved: the heuristic's 3, then one of its own) or
    after the last: the run stops rather than play the edited source under the hash it began with (batches
    that a run of the source as it was would reuse), or write files whose metadata name the edited source for
    games the old one played. Every batch saved is the old source's: with the edit undone, the same command
    plays the rest with it; with the edit, it replays the strategy's cells."""
    from sim import study
    from sim.study import StudyError

    saved = []
    save = study._save_batch
    edited = MODULE.replace("len(choices) - 1", "0  # the first token")

    def save_then_edit(*args, **kwargs):
        save(*args, **kwargs)
        saved.append(args)
        if len(saved) == after:
            module.write_text(edited)

    monkeypatch.setattr(study, "_save_batch", save_then_edit)
    spec, out = _spec(tmp_path), tmp_path / "out"
    with pytest.raises(StudyError, match=r"source of module strategy (my_wary_strats:wary|wary) was edited since the "
                                         r"run began.*run the same command again"):
        run_study(spec, out, progress=False)
    assert len(saved) == after and not (out / "metadata.json").exists()
    monkeypatch.setattr(study, "_save_batch", save)
    module.write_text(MODULE)  # the edit undone
    wary = "p2_wary_standard_default_default"
    done = run_study(spec, out, progress=False)
    assert done.finished and sorted(done.computed) == [(wary, b) for b in range(after - 3, 3)]
    assert _played_wary(out)["turns"].to_list() == _wary_games(first=False)["turns"].to_list()
    module.write_text(edited)
    again = run_study(spec, out, progress=False)
    assert again.finished and sorted(again.computed) == [(wary, b) for b in range(3)] and len(again.skipped) == 3
    assert json.loads((out / "metadata.json").read_text())["strategy_modules"]["wary"]["source_hash"] == \
        _folder_hash(module)
    assert _played_wary(out)["turns"].to_list() == _wary_games(first=True)["turns"].to_list()


def test_a_python_strategy_on_the_kernel_is_refused(tmp_path, module):
    spec = _spec(tmp_path, SPEC.replace('engine = "reference"\n', ""))
    with pytest.raises(SpecError, match=r"strategy\.wary\.module.*no kernel twin.*engine = \"reference\".*KernelStrategy"):
        run_study(spec, tmp_path / "out", progress=False)
    assert not (tmp_path / "out" / "summary.parquet").exists()
    run_study(spec, tmp_path / "out2", engine="reference", progress=False, max_batches=1)  # --engine reference


@pytest.mark.parametrize("patch,reason", [
    (('module = "my_wary_strats:wary"', 'module = "my_wary_strats:nope"'), "has no 'nope'"),
    (('module = "my_wary_strats:wary"', 'module = "no_such_module_x:wary"'), "cannot import"),
    (('module = "my_wary_strats:wary"', 'module = "my_wary_strats"'), "not a module path"),
    (('module = "my_wary_strats:wary"', 'module = "my_wary_strats:wary"\nbase = "heuristic"'), "exactly one of base"),
    (("pool_target = 5", "pool_targt = 5"), "unknown heuristic parameter"),
])
def test_bad_module_tables_are_refused_naming_the_key(tmp_path, module, patch, reason):
    with pytest.raises(SpecError, match=reason) as e:
        _spec(tmp_path, SPEC.replace(*patch))
    assert "strategy.wary" in str(e.value)


BANDS = """
[check]
seed = 3
games = 40

[[cell]]
name = "2p-wary"
players = 2
strategy = "my_wary_strats:wary"
params = { pool_target = 5 }
engine = "reference"
win_rate = [0.0, 1.0]
"""


def test_check_plays_a_module_strategy_cell(tmp_path, module):
    p = tmp_path / "bands.toml"
    p.write_text(textwrap.dedent(BANDS))
    (res,) = run_check(p, update=True)
    from my_wary_strats import Wary

    want = sim.simulate(players=2, games=40, seed=3, strategy=Wary(name="wary", pool_target=5), engine="reference")
    assert res.tally.n == 40 and res.estimates["win_rate"].value == pytest.approx(want["win"].mean())
    p.write_text(textwrap.dedent(BANDS).replace('engine = "reference"\n', ""))
    with pytest.raises(BandsError, match=r"cell\[2p-wary\]\.strategy.*no kernel twin"):
        run_check(p, update=True)


KERNEL_MODULE = '''
from numba import njit

from sim.kernel.custom import KernelStrategy


@njit
def token(view, choices, n):
    return 0


shy = KernelStrategy("heuristic", token=token, name="shy")
'''


def test_a_kernel_strategy_object_is_accepted_on_the_kernel_only(tmp_path, monkeypatch):
    import sys

    (tmp_path / "my_shy_strats.py").write_text(KERNEL_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "my_shy_strats", raising=False)
    text = SPEC.replace('module = "my_wary_strats:wary"\nparams = { pool_target = 5 }', 'module = "my_shy_strats:shy"')
    spec = _spec(tmp_path, text.replace('engine = "reference"', 'engine = "kernel"'))
    spec.check_engine("kernel")  # accepted (playing it would compile the pairing: tests/test_kernel_custom.py)
    with pytest.raises(SpecError, match=r"strategy\.wary\.module.*KernelStrategy: it plays on the kernel only"):
        spec.check_engine("reference")


def test_a_module_strategy_playing_tuned_on_another_pack_is_said_before_any_batch(tmp_path, monkeypatch):
    """A module strategy's object built on ``tuned`` (here the 2-player set itself, as a module might give it) is
    judged like the registered name: the study says it once, before any batch, whose jobs say nothing."""
    import sys
    import warnings

    from sim.study import run_study
    from strategies import modules

    (tmp_path / "my_tuned_strats.py").write_text("import strategies\n\nTUNED2 = strategies.make('tuned', players=2)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "my_tuned_strats", raising=False)
    monkeypatch.delitem(modules._IMPORTED, "my_tuned_strats", raising=False)
    spec = _spec(tmp_path, """
        [experiment]
        name = "mt"
        seed = 3
        games = 40
        batch = 20

        [grid]
        players = [2]
        strategies = ["mine"]
        setups = ["lobo1"]

        [strategy.mine]
        module = "my_tuned_strats:TUNED2"

        [setup.lobo1]
        overrides = { "lobo.track.start" = 1 }
        """)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert run_study(spec, tmp_path / "out", progress=False, charts=False).finished
    said = [str(w.message) for w in caught if "searched on the default pack" in str(w.message)]
    assert len(said) == 1 and said[0].startswith("strategy 'tuned' plays") and "another content pack:" in said[0]


def test_the_watch_takes_every_kind_of_numpy_array_as_it_was_and_sees_each_change():
    """An unchanged array of any kind reads as unchanged (a record with an object field, an object matrix, a masked
    array, a numpy scalar, a 0-d array: an item-by-item copy had compared new objects by identity, refusing them for
    ever), and a change in place is seen: a value, an object inside, a mask."""
    import numpy as np

    from strategies import _frozen, _same

    record = np.zeros(2, dtype=[("a", "i8"), ("b", "O")])
    boxes = np.array([[1], "a"], dtype=object)
    masked = np.ma.masked_array([1, 2], [0, 1])
    values = [record, np.matrix([[1, 2]], dtype=object), boxes, masked, np.arange(3.0), np.float64(0.5), np.array(3)]
    snaps = [_frozen(v) for v in values]
    assert all(_same(v, s) for v, s in zip(values, snaps))
    changes = [lambda: record.__setitem__(0, (0, [1])), lambda: boxes[0].append(2),
               lambda: masked.mask.__setitem__(0, True), lambda: values[4].__setitem__(1, 7.0)]
    for change, (v, s) in zip(changes, [(record, snaps[0]), (boxes, snaps[2]), (masked, snaps[3]),
                                        (values[4], snaps[4])]):
        change()
        assert not _same(v, s)
    assert not _same(np.arange(3), _frozen(np.arange(3.0)))  # another dtype
