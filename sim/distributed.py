"""Play a study's batches on a Dask cluster (``--scheduler``), or here, one after another.

A study is a list of independent jobs (one batch of one cell each). A *runner*
plays them and hands every finished result back to the caller in the calling
process, which alone writes files. So the files do not depend on where or in
which order the batches were played: a batch's games are a pure function of
(seed, game index), and assembly reads the batches in cell and batch order.

* :class:`LocalRunner` plays the jobs here, in order.
* :class:`DaskRunner` sends them to a Dask cluster as tasks: an existing one
  (``tcp://HOST:8786``) or a ``LocalCluster`` of N worker processes started for
  the run (``local:N``). Each worker process loads (or compiles) the kernel once,
  when it starts (:func:`warm_kernel_plugin`), not once per task. A worker lost mid-run
  costs only the batch it was playing: the scheduler plays it again elsewhere,
  and a result is handed back once per job, whatever happened on the cluster.
  A job that fails every retry stops the run with its error; every batch handed
  back before that has been saved by the caller. A job whose games stop on their
  own error (a strategy's illegal answer, an engine that stops) is not tried
  again: it raises that error in the caller, as a run here does.

A worker plays with its own installed code, not the caller's, while the resume
key and the metadata of the results are computed here. So every task carries
the caller's code identity (:func:`code_identity`: the source hash of ``sim/``
and ``strategies/``, ``RULES_VERSION``, ``strategies/tuned.toml``, the source
of each module strategy the jobs play, and the versions of Python, numpy, numba
and llvmlite, which compile and run the kernel), and a worker whose own identity
differs plays nothing: it hands back what differs, and the run stops with
:class:`WorkerCodeMismatch` naming the worker. Numbers of other code are never
mixed in, nor written under this code's metadata.

Dask is an optional extra: ``pip install 'smersh-sim[distributed]'``.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import re
import signal
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

INSTALL_HINT = "pip install 'smersh-sim[distributed]'"
RETRIES = 2  # a job raising an exception is tried this many more times (lost workers are retried by Dask), unless
# the exception is one of its games' own (_games_own_errors), which is the same on every try


class SchedulerError(ValueError):
    """A ``--scheduler`` value that cannot be used (bad form, Dask missing, cluster unreachable)."""


class WorkersLost(SchedulerError):
    """A run's cluster left without a ready worker while batches were still to play (those played are kept)."""


class BatchFailed(RuntimeError):
    """A job failed on the cluster after every retry."""


class WorkerCodeMismatch(SchedulerError):
    """A worker runs other code than this process (or cannot load a module strategy): it plays nothing."""


@dataclass(frozen=True)
class Scheduler:
    """A parsed ``--scheduler``: ``kind`` is ``'local'`` (``workers`` processes here) or ``'address'``."""

    kind: str
    workers: int = 0
    address: str = ""

    def __str__(self) -> str:
        return f"local:{self.workers}" if self.kind == "local" else self.address


# PROTOCOL://HOST:PORT (an IPv6 host in brackets); inproc:// addresses (one process) have no port
_ADDRESS = re.compile(r"^(tcp|tls|ucx|ws|wss)://(\[[0-9A-Fa-f:.]+\]|[^\s/:\[\]]+)(?::(\d*))?/?$")
_INPROC = re.compile(r"^inproc://\S+$")


def parse_scheduler(text: str) -> Scheduler:
    """``'local:2'`` or ``'tcp://host:8786'`` -> :class:`Scheduler` (a clear error otherwise). ``local:N``
    takes N from 1 to the cores this process may use (:func:`_host_cores`)."""
    if not isinstance(text, str) or not text.strip():
        raise SchedulerError("--scheduler: give local:N (N worker processes here) or a scheduler address tcp://HOST:PORT")
    text = text.strip()
    if text.startswith("local"):
        m = re.fullmatch(r"local:(\d+)", text)
        cores = _host_cores()
        if not m or int(m.group(1)) < 1:
            raise SchedulerError(f"--scheduler {text!r}: expected local:N with N worker processes from 1 to {cores}, "
                                 f"the cores this command may use, e.g. local:{min(2, cores)}")
        if int(m.group(1)) > cores:
            raise SchedulerError(f"--scheduler {text!r}: at most local:{cores} here, the cores this command may use "
                                 "(more worker processes than cores would only take turns on them)")
        return Scheduler("local", workers=int(m.group(1)))
    if _INPROC.match(text):
        return Scheduler("address", address=text)
    m = _ADDRESS.match(text)
    if not m:
        raise SchedulerError(f"--scheduler {text!r}: expected local:N or a Dask scheduler address such as tcp://HOST:8786")
    port = m.group(3)
    if not port:
        raise SchedulerError(f"--scheduler {text!r}: the address needs a port, e.g. {m.group(1)}://{m.group(2)}:8786")
    if not port.isdigit() or not 1 <= int(port) <= 65535:
        raise SchedulerError(f"--scheduler {text!r}: the port must be a number from 1 to 65535, e.g. 8786")
    return Scheduler("address", address=text)


def require_dask():
    """Import ``distributed`` or raise a :class:`SchedulerError` that says what to install."""
    try:
        import distributed
    except ImportError:
        raise SchedulerError(f"--scheduler needs Dask distributed, which is not installed: {INSTALL_HINT}") from None
    return distributed


READY_TIMEOUT = 120.0  # seconds to wait for a ready worker (a cold one compiles the kernel first: ~25 s here)
WATCH_EVERY = 2.0  # seconds between looks at the cluster while a run waits for results
SAME_CODE_HINT = ("install smersh-sim, the same version as here, on every worker (or put this checkout on the "
                  "workers' PYTHONPATH)")


def _ready(workers: dict) -> list[str]:
    """The addresses of the workers that can play (running or paused, not starting, failed or stopping)."""
    return [a for a, w in workers.items() if w.get("status", "running") in ("running", "paused")]


def _name_of(address: str, info: dict) -> str:
    name = str(info.get("name", ""))
    return "" if name in ("", "None", address) or name.isdigit() else f" ({name!r})"


def _remote_error(e: BaseException) -> str:
    """An exception from a worker in one line (Dask hands some back as ``Exception('ImportError(...)')``)."""
    text = str(e) if type(e) is Exception else f"{type(e).__name__}: {e}"
    return " ".join(text.split())


# ------------------------------------------------------------------ code identity
_OWN_SOURCE: str | None = None  # this process's source hash of sim/ and strategies/, taken once


def _own_source() -> str:
    """The source hash of ``sim/`` and ``strategies/`` as this (worker) process loaded them: taken once, when
    the worker starts (:func:`warm_kernel_plugin`) or at its first task, since its modules are not reloaded."""
    global _OWN_SOURCE
    if _OWN_SOURCE is None:
        from sim.study import source_hash

        _OWN_SOURCE = source_hash()
    return _OWN_SOURCE


def _module_digest(path: str, strict: bool) -> str:
    """The source hash of a module strategy; on a worker (not ``strict``) also why it cannot be had
    (``error: ...``), which then differs from the caller's hash."""
    from strategies import modules

    if strict:
        return modules.source_hash(path)
    try:
        return modules.source_hash(path)
    except Exception as e:  # not importable there, unreadable...
        return f"error: {' '.join(str(e).split())}"


RUNTIME = ("Python", "numpy", "numba", "llvmlite")  # what compiles and runs the kernel, besides its source


def runtime_versions() -> dict[str, str]:
    """The versions of :data:`RUNTIME` in this process (Python as major.minor.micro)."""
    import sys

    import llvmlite
    import numba
    import numpy

    v = sys.version_info
    return {"Python": f"{v.major}.{v.minor}.{v.micro}", "numpy": numpy.__version__, "numba": numba.__version__,
            "llvmlite": llvmlite.__version__}


def code_identity(modules: Iterable[str] = (), *, source: str | None = None, strict: bool = True) -> dict:
    """What decides a job's numbers besides the job itself: the source hash of ``sim/`` and ``strategies/``
    (:func:`sim.study.source_hash`, or ``source``), ``RULES_VERSION``, the digest of
    ``strategies/tuned.toml`` (the ``tuned`` strategy's parameters, read at each game), the versions of
    Python, numpy, numba and llvmlite (:func:`runtime_versions`) and the source hash of each module
    strategy in ``modules`` (a ValueError if one cannot be hashed, unless not ``strict``)."""
    import sim
    from sim.study import source_hash
    from strategies import tuned

    ident = {"source": source_hash() if source is None else source, "rules_version": sim.RULES_VERSION,
             "tuned": tuned.file_digest(), "versions": runtime_versions()}
    paths = sorted(set(modules))
    if paths:
        ident["modules"] = {p: _module_digest(p, strict) for p in paths}
    return ident


@dataclass(frozen=True)
class _OtherCode:
    """What a worker hands back instead of a result when its code identity is not the caller's."""

    worker: str
    identity: dict


def _short(h) -> str:
    h = str(h)
    return h if h.startswith("error:") or h == "missing" else f"hash {h[:12]}"


def describe_mismatch(worker: str, theirs: dict, ours: dict) -> str:
    """One line: which worker runs other code than this process, and what differs."""
    what = []
    if "error" in theirs:
        what.append(f"it cannot tell its code ({theirs['error']})")
    else:
        if theirs.get("rules_version") != ours["rules_version"]:
            what.append(f"RULES_VERSION {theirs.get('rules_version')!r} there, {ours['rules_version']!r} here")
        if theirs.get("source") != ours["source"]:
            what.append(f"the source of sim/ and strategies/ ({_short(theirs.get('source'))} there, "
                        f"{_short(ours['source'])} here)")
        if theirs.get("tuned") != ours["tuned"]:
            what.append(f"strategies/tuned.toml ({_short(theirs.get('tuned'))} there, {_short(ours['tuned'])} here)")
        versions = theirs.get("versions") or {}
        for name, v in ours["versions"].items():
            if versions.get(name) != v:
                what.append(f"{name} {versions.get(name, 'unknown')} there, {v} here")
        there = theirs.get("modules") or {}
        for path, h in (ours.get("modules") or {}).items():
            if there.get(path) != h:
                what.append(f"module strategy {path} ({_short(there.get(path))} there, {_short(h)} here)")
    return (f"worker {worker} runs other code than this process: {'; '.join(what) or 'its code identity'}; "
            "nothing it played is used (its numbers would differ under this run's metadata): run the same "
            "code on every worker (the same checkout or version of smersh-sim, the same versions of Python, numpy, "
            "numba and llvmlite, and the same module strategies)")


def _check_code(code: dict | None) -> _OtherCode | None:
    """On a worker: None if its code identity is ``code`` (the caller's), else what it is."""
    if code is None:
        return None
    try:
        here = code_identity((code.get("modules") or {}).keys(), source=_own_source(), strict=False)
    except Exception as e:
        here = {"error": _remote_error(e)}
    return None if here == code else _OtherCode(_worker_label(), here)


class LocalRunner:
    """Plays jobs in this process, in order."""

    description = "this process"

    def run(self, fn: Callable, jobs: Iterable, shared=None, *, modules: Iterable[str] = ()
            ) -> Iterator[tuple[object, object]]:
        """Yield ``(job, fn(job, shared, threads=None))`` for every job, in order (``modules``: the module
        strategies the jobs play, for a cluster's code check; this process is the caller)."""
        for job in jobs:
            yield job, fn(job, shared, threads=None)

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _warm_kernel() -> None:
    """Load (or compile) the kernel in this process: one tiny game through every built-in decision path."""
    import sim

    sim.simulate(players=2, games=2, strategy="heuristic", seed=1, threads=1)
    sim.simulate(players=1, games=2, strategy="random", seed=1, threads=1)


def warm_kernel_plugin():
    """A Dask worker plugin: each worker process loads the compiled kernel once, when it starts."""
    from distributed import WorkerPlugin

    class WarmKernel(WorkerPlugin):
        name = "smersh-warm-kernel"
        idempotent = True

        def setup(self, worker=None) -> None:
            _own_source()  # the code this worker loaded, before anything can change on its disk
            _warm_kernel()

    return WarmKernel()


def _value(x):
    """Identity: makes shared inputs a recomputable task result."""
    return x


def _worker_label() -> str:
    """This worker's address (and its name when it has one of its own), for messages."""
    try:
        from distributed import get_worker

        w = get_worker()
    except (ImportError, ValueError):
        return "?"
    name = str(w.name)
    return w.address if name in ("", "None", w.address) or name.isdigit() else f"{w.address} ({name!r})"


def _job_label(job) -> str:
    """A job as a message names it: its own ``str`` where it has one (a study batch), else its repr."""
    return str(job) if type(job).__str__ is not object.__str__ and not isinstance(job, tuple) else f"job {job!r}"


def _host_cores() -> int:
    """The cores this process may use on its host."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _task_threads(threads) -> int:
    """Kernel threads for a task on this worker: ``threads`` itself when it is a number, else (a mapping of
    host -> Dask threads on it, from the scheduler) this host's cores shared among the Dask threads on it."""
    if isinstance(threads, int):
        return threads
    from distributed import get_worker
    from distributed.comm import get_address_host

    w = get_worker()
    on_host = (threads or {}).get(get_address_host(w.address)) or w.state.nthreads
    return max(1, _host_cores() // max(1, on_host))


def _games_own_errors() -> tuple[type[BaseException], ...]:
    """What a job raises that playing it again anywhere would raise again, since its games are a pure function
    of (seed, game index): a strategy's illegal answer (StrategyError, also a KernelStrategy that numba
    cannot compile) and an engine that stops where the rules cannot go on (RuntimeError: the reference
    engine's RuleError, the kernel's own). The command line, with or without a cluster, ends on them in one
    line of their own."""
    from sim.rules.errors import StrategyError

    return StrategyError, RuntimeError


@dataclass(frozen=True)
class _GamesError:
    """What a worker hands back instead of a result when the job raised one of :func:`_games_own_errors`:
    the exception itself (with notes naming the worker and holding its traceback there). Handed back, not
    raised, so that Dask neither plays the job again nor logs its traceback on the worker."""

    error: BaseException


def _run_job(fn, job, shared, threads, code=None):
    """The task a worker runs: ``fn(job, shared)`` with the kernel's thread count for this worker
    (:func:`_task_threads`), if the worker's code identity is ``code`` (the caller's); else, without
    playing, what its identity is (:class:`_OtherCode`). An error of the games' own
    (:func:`_games_own_errors`) is handed back as a :class:`_GamesError`; any other is raised, for Dask to
    try the job again (:data:`RETRIES`)."""
    other = _check_code(code)
    if other is not None:
        return other
    try:
        return fn(job, shared, threads=_task_threads(threads))
    except _games_own_errors() as e:
        import pickle
        import traceback

        there = "".join(traceback.format_exception(e)).rstrip()  # for SMERSH_SIM_TRACEBACK=1
        e.add_note(f"on worker {_worker_label()}")  # travels with the exception back to the caller
        e.add_note(f"its traceback there:\n{there}")
        try:
            pickle.loads(pickle.dumps(e))
        except Exception:  # an exception that cannot travel: raised, as any other
            raise e from None
        return _GamesError(e)
    except Exception as e:
        e.add_note(f"on worker {_worker_label()}")  # travels with the exception back to the caller
        raise


@contextlib.contextmanager
def _interrupts_held():
    """Ctrl-C held back for the block: a SIGINT that comes in meanwhile is raised as KeyboardInterrupt as it
    ends, and every thread and process started in the block keeps SIGINT blocked for good.

    A ``local:N`` cluster is started in such a block: its event loop's thread, the nannies that run there and
    the worker processes they start (then, or later in place of a lost one) inherit the blocked signal, so
    the Ctrl-C that a terminal sends to the whole process group stops only this process, which then stops
    the cluster (:meth:`DaskRunner.close`, itself run in such a block so that a second Ctrl-C cannot cut it
    short). A worker that took the Ctrl-C itself would die with a traceback and leave the run waiting for
    workers that are gone. Held back only where Python's own handler is in place in the main thread (not
    where SIGINT is ignored, nor where a program installed its own)."""
    caught: list[int] = []
    hold = (threading.current_thread() is threading.main_thread()
            and signal.getsignal(signal.SIGINT) is signal.default_int_handler)
    if hold:
        signal.signal(signal.SIGINT, lambda signum, frame: caught.append(signum))
    masked = hasattr(signal, "pthread_sigmask")  # not on Windows, where no process group shares a Ctrl-C
    if masked:
        from multiprocessing import resource_tracker

        # multiprocessing starts its resource tracker with the first worker process, and starting it
        # unblocks SIGINT in the starting thread (the event loop's, which starts the workers): start it first
        resource_tracker.ensure_running()
        before = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        if masked:
            signal.pthread_sigmask(signal.SIG_SETMASK, before)
        if hold:
            signal.signal(signal.SIGINT, signal.default_int_handler)
            if caught:
                raise KeyboardInterrupt


@contextlib.contextmanager
def _logs_off():
    """No log record of this process gets out during the block."""
    before = logging.root.manager.disable
    logging.disable(logging.CRITICAL)
    try:
        yield
    finally:
        logging.disable(before)


def _quiet(cluster) -> None:
    """No "exception was never retrieved" report from the event loop of a cluster being stopped: a message
    to a worker that is going away fails there, and nothing is left to retrieve it."""
    try:
        cluster.loop.asyncio_loop.set_exception_handler(lambda loop, context: None)
    except AttributeError:
        pass


def _kill_workers(cluster) -> None:
    """Kill the worker processes of a local cluster at once, with no worker started in their place (they
    write nothing: the results come back to this process, which alone writes files)."""
    for nanny in list(getattr(cluster, "workers", {}).values()):
        try:
            nanny.auto_restart = False
            os.kill(nanny.process.process.pid, signal.SIGKILL)
        except (AttributeError, TypeError, OSError):  # not started, gone already, or a Dask that differs
            pass


HANDSHAKE_TRIES = 3


def _connect(make):
    """``make()`` (a new Dask client), tried again when the scheduler's handshake fails on a race of Dask's own:
    when a client connects just after another one left, the scheduler may batch another message with its
    "stream-start" reply and the client's check of that reply fails (an AssertionError inside Dask)."""
    from distributed.client import _get_global_client

    for attempt in range(1, HANDSHAKE_TRIES + 1):
        before = _get_global_client()
        try:
            return make()
        except AssertionError as e:
            failed = _get_global_client()  # the client made default before its handshake: closed, not left behind
            if failed is not None and failed is not before:
                with contextlib.suppress(Exception):
                    failed.close(timeout=5)
            if attempt == HANDSHAKE_TRIES:
                raise OSError(f"the scheduler's handshake failed {HANDSHAKE_TRIES} times "
                              f"({type(e).__name__} in Dask's client{': ' + str(e) if str(e) else ''})") from None
            time.sleep(0.5 * attempt)


class DaskRunner:
    """Plays jobs as tasks on a Dask cluster; results come back in completion order."""

    def __init__(self, scheduler: Scheduler | str, *, threads_per_task: int | None = None,
                 ready_timeout: float | None = None):
        """``ready_timeout``: seconds a run waits for a ready worker, at the start or later (None:
        :data:`READY_TIMEOUT`)."""
        ready_timeout = READY_TIMEOUT if ready_timeout is None else float(ready_timeout)
        if not math.isfinite(ready_timeout) or ready_timeout <= 0:  # NaN would wait for ever
            raise SchedulerError(f"the readiness limit must be a finite number of seconds above 0, got {ready_timeout}")
        distributed = require_dask()
        self.scheduler = parse_scheduler(scheduler) if isinstance(scheduler, str) else scheduler
        self.ready_timeout = ready_timeout
        self.threads_per_task = threads_per_task  # None: each worker's host decides (:func:`_task_threads`)
        self._cluster = None
        self.client = None
        try:
            try:
                if self.scheduler.kind == "local":
                    # the scheduler always serves HTTP (dashboard_address=None means port 8787, and a warning
                    # when another cluster holds it): a free port on this host only, and no dashboard. Its
                    # logs stay off the terminal (the run says in one line whatever stops it), and its
                    # worker processes are stopped by this one, never by a Ctrl-C of their own
                    with _interrupts_held():
                        self._cluster = distributed.LocalCluster(
                            n_workers=self.scheduler.workers, threads_per_worker=1, processes=True,
                            dashboard_address="127.0.0.1:0", scheduler_kwargs={"dashboard": False},
                            silence_logs=logging.CRITICAL,
                        )
                        self.client = _connect(lambda: distributed.Client(self._cluster))
                else:
                    self.client = _connect(lambda: distributed.Client(self.scheduler.address, timeout="20s"))
            except (OSError, ValueError, TypeError) as e:  # unreachable, timed out, or an address Dask refuses
                raise SchedulerError(f"--scheduler {self.scheduler}: cannot reach the Dask scheduler ({e})") from None
            try:
                self.client.register_plugin(warm_kernel_plugin(), name="smersh-warm-kernel")
            except Exception as e:  # a worker failed to unpickle or run it: it cannot load the simulator
                raise SchedulerError(f"--scheduler {self.scheduler}: a worker cannot load the simulator "
                                     f"({_remote_error(e)}); {SAME_CODE_HINT}") from None
            self.description = f"Dask cluster {self.scheduler} ({self._wait_ready()} workers)"
        except BaseException as e:  # a Ctrl-C included: the cluster of local:N is stopped, not left behind
            self.close(interrupted=isinstance(e, KeyboardInterrupt))
            raise

    def _workers(self) -> dict:
        return self.client.scheduler_info().get("workers", {})

    def n_workers(self) -> int:
        """Workers ready to play (running; a worker that failed to start or is stopping is not counted)."""
        return len(_ready(self._workers()))

    def _wait_ready(self) -> int:
        """The number of ready workers, once there is one; a :class:`SchedulerError` if none is within
        ``ready_timeout`` seconds (a worker that cannot load the simulator never gets ready)."""
        deadline = time.monotonic() + self.ready_timeout
        while True:
            workers = self._workers()
            n = len(_ready(workers))
            if n:
                return n
            if time.monotonic() >= deadline:
                raise SchedulerError(self._none_ready(workers))
            time.sleep(0.25)

    def _none_ready(self, workers: dict) -> str:
        t = f"{self.ready_timeout:g} s"
        if self.scheduler.kind == "local":  # no worker to start by hand: those started here are gone
            state = "; ".join(f"{a}{_name_of(a, w)} ({w.get('status', '?')})" for a, w in sorted(workers.items()))
            return (f"--scheduler {self.scheduler}: no worker is ready after {t}: the {self.scheduler.workers} "
                    f"worker process(es) started here for this run "
                    + (f"failed to start or are stopping: {state}" if workers else "have stopped")
                    + " (killed from outside, out of memory, or unable to load the simulator)")
        if not workers:
            return (f"--scheduler {self.scheduler}: no worker on the cluster for {t}; start some with "
                    f"`dask worker {self.scheduler}` on hosts with smersh-sim installed")
        names = ", ".join(f"{a}{_name_of(a, w)} ({w.get('status', '?')})" for a, w in sorted(workers.items()))
        return (f"--scheduler {self.scheduler}: no worker is ready after {t}: {len(workers)} worker(s) failed "
                f"to start or are stopping: {names}; a worker that cannot load the simulator (not installed "
                f"there, or another version) fails to start (see its log); {SAME_CODE_HINT}")

    def _threads(self) -> int | dict[str, int]:
        """What each task is told about kernel threads: the fixed ``threads_per_task``, or the Dask threads on
        each worker host (from the scheduler), which the worker divides its own host's cores by."""
        if self.threads_per_task:
            return self.threads_per_task
        per_host: dict[str, int] = {}
        for w in self._workers().values():
            host = w.get("host", "")
            per_host[host] = per_host.get(host, 0) + int(w.get("nthreads", 1))
        return per_host

    def run(self, fn: Callable, jobs: Iterable, shared=None, *, modules: Iterable[str] = ()
            ) -> Iterator[tuple[object, object]]:
        """Submit every job; yield ``(job, result)`` as each finishes.

        Each task is played only by a worker whose code identity is this
        process's (:func:`code_identity`, with the module strategies
        ``modules`` the jobs play); a worker with another raises
        :class:`WorkerCodeMismatch`, and nothing it played is yielded.
        A job whose task fails every retry raises :class:`BatchFailed` (the
        remaining tasks are cancelled); everything yielded before stays valid.
        A job that stops on an error of its games' own (a strategy's illegal
        answer, an engine that stops: :func:`_games_own_errors`) is not tried
        again, and raises that error itself, as a run here would.
        A cluster left without a ready worker for ``ready_timeout`` seconds
        raises :class:`SchedulerError` instead of waiting for ever.
        """
        from distributed import as_completed

        jobs = list(jobs)
        if not jobs:
            return
        code = code_identity(modules)
        self._wait_ready()
        # a task's result, not scattered data: the scheduler can compute it again if its worker is lost
        shared_f = self.client.submit(_value, shared, pure=False) if shared is not None else None
        futures = {}
        run_id = uuid.uuid4().hex[:12]
        threads = self._threads()
        for i, job in enumerate(jobs):
            f = self.client.submit(_run_job, fn, job, shared_f, threads, code, retries=RETRIES,
                                   key=f"smersh-batch-{run_id}-{i}", pure=False)
            futures[f.key] = (f, job)
        try:
            done = as_completed([f for f, _ in futures.values()])
            look, idle_since = time.monotonic() + WATCH_EVERY, None
            while not done.is_empty():
                if not done.has_ready():  # waiting: is any worker left to play the batches?
                    now = time.monotonic()
                    if now >= look:
                        look = now + WATCH_EVERY
                        workers = self._workers()
                        idle_since = None if _ready(workers) else (idle_since or now)
                        if idle_since is not None and now - idle_since >= self.ready_timeout:
                            raise WorkersLost(self._none_ready(workers))
                    time.sleep(0.02)
                    continue
                f = next(done)
                job = futures[f.key][1]
                try:
                    # a finished result can be lost with its worker before it is fetched: result()
                    # then waits while the scheduler plays the batch again
                    if f.status in ("error", "cancelled"):
                        raise RuntimeError(f"the task was {f.status}")
                    result = f.result()
                except Exception as err:  # the task's own error, after every retry
                    cause = f.exception() if f.status == "error" else err
                    where = [n[len("on worker "):] for n in getattr(cause, "__notes__", None) or []
                             if isinstance(n, str) and n.startswith("on worker ")]
                    raise BatchFailed(f"{_job_label(job)} failed on the cluster after {RETRIES + 1} tries"
                                      + (f" (the last on worker {where[-1]})" if where else "")
                                      + f": {type(cause).__name__}: {cause}") from None
                if isinstance(result, _OtherCode):
                    raise WorkerCodeMismatch(describe_mismatch(result.worker, result.identity, code))
                if isinstance(result, _GamesError):  # not tried again: raised as a run here raises it
                    raise result.error
                yield job, result
                f.release()
        finally:
            for f, _ in futures.values():
                if f.status == "pending":
                    f.cancel()

    def close(self, *, interrupted: bool = False) -> None:
        """Disconnect (and stop the cluster of ``local:N``); safe to call more than once. ``interrupted`` (a
        Ctrl-C): the worker processes of ``local:N`` are killed at once, not asked to finish the batch they
        play (which Dask waits for up to 4 s before it kills them itself). A Ctrl-C meanwhile is raised
        once the cluster has stopped."""
        client, cluster, self.client, self._cluster = self.client, self._cluster, None, None
        # a local cluster's processes going away is no news to print (its logs are off the terminal anyway,
        # but Dask puts them back before its event loop has stopped)
        with _interrupts_held(), (_logs_off() if cluster is not None else contextlib.nullcontext()):
            try:
                if client is not None:
                    client.close()
            finally:
                if cluster is not None:
                    _quiet(cluster)
                    if interrupted:
                        _kill_workers(cluster)
                    cluster.close()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, *exc) -> None:
        self.close(interrupted=exc_type is not None and issubclass(exc_type, KeyboardInterrupt))


def runner(scheduler: str | None, ready_timeout: float | None = None):
    """The runner for a ``--scheduler`` value (None: this process); ``ready_timeout``: see :class:`DaskRunner`."""
    if scheduler is None:
        return LocalRunner()
    return DaskRunner(parse_scheduler(scheduler), ready_timeout=ready_timeout)


__all__ = ["BatchFailed", "DaskRunner", "LocalRunner", "Scheduler", "SchedulerError", "WorkerCodeMismatch",
           "code_identity", "parse_scheduler", "runner"]
