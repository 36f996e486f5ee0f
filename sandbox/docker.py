"""DockerSandbox: one hardened container per task; commands run with `docker exec` or its persistent executor.

What it isolates, by default: no network (`none`), read-only root with a
size-capped tmpfs on /tmp, no Linux capabilities, no privilege gain through
setuid, a non-root user, process/memory/CPU limits, and Tether's own
seccomp allowlist (sandbox/seccomp.py: io_uring, ptrace, bpf, keyrings,
mounts and namespaces refused). What it does not: the
kernel is shared with the host (a kernel exploit escapes), the workspace is
the host's own folder (the command can change or delete anything in it), and
anything in the memory folder is readable. It is a strong fence against
mistakes, not a security boundary against a determined attacker.

Each exec runs `timeout -s KILL` inside the container and keeps a client-side
socket deadline (timeout + `kill_grace_s`; the timeout itself where the image
has no `timeout` or only busybox's, whose watchdog lingers); a command that ran out of time is
killed together with every process it started: those carrying a per-exec
marker in their environment and those that started after it did (see
sandbox/processes.py). Output is streamed into a head/tail cap.
`processes()` lists the container's processes, run as a uid of its own.
With `executor = "persistent"` a command is a request to one server in the
container instead of an exec of its own (sandbox/executor.py); every check
above stays here, the same on both paths.
"""

from __future__ import annotations

import logging
import math
import posixpath
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tether.common.errors import ConfigError
from tether.common.limits import WorkspaceLimits
from tether.sandbox import cleanup
from tether.sandbox.base import ExecResult
from tether.sandbox.config import MAX_TIMEOUT_S, SANDBOX_HOME, DockerSandboxConfig
from tether.sandbox.egress import ConnectionRecord
from tether.sandbox.engine import connect, docker_sdk
from tether.sandbox.errors import EngineLostError, SandboxError
from tether.sandbox.executor import Executor, ExecutorLostError
from tether.sandbox.executor_link import (
    EXECUTOR_LOST,
    OOM_KILLED,
    OOM_LOST,
    executor_mount,
    kill_server,
    oom_kills,
)
from tether.sandbox.executor_server import MOUNT as EXECUTOR_MOUNT
from tether.sandbox.images import ensure_image
from tether.sandbox.lending import LendingRecord, reclaim
from tether.sandbox.network import SandboxNetwork
from tether.sandbox.output import OutputCap, copy_stream
from tether.sandbox.pids import (
    FORK_FAILED,
    NOT_STARTED,
    PIDS_FREED,
    PIDS_FREED_AFTER,
    PIDS_FULL,
    fork_refusals,
    near_full,
    pid_count,
    pids_file,
)
from tether.sandbox.processes import PROBE as PS_PROBE
from tether.sandbox.processes import Proc, parse, probe_user, reap_argv
from tether.sandbox.seccomp import security_opt
from tether.sandbox.workspace import Handover, check_folder, sandbox_user

if TYPE_CHECKING:
    import docker
    from docker.models.containers import Container

log = logging.getLogger(__name__)

MARK = "TETHER_EXEC"
TIMEOUT_CODES = (124, 137)
PROBE = ("command -v bash >/dev/null && echo bash; command -v timeout >/dev/null && "
         "case $(timeout --help 2>&1) in *BusyBox*) echo busybox-timeout;; *) echo timeout;; esac; "
         "command -v python3 >/dev/null && echo python3; echo probed")
"""busybox `timeout` is left unused: its watchdog outlives the command by up to a second (it polls each second),
and every process listing after the command would wait for it; the client's own deadline stops the command."""
PROBE_TRIES = 3
PROBE_TIMEOUT_S = 20
PROBE_OUTPUT_BYTES = 1_000_000
RUNAWAY_WAIT_S = 0.3


def _reason(e: BaseException) -> str:
    """The engine's own explanation of an API error, on one line."""
    text = str(getattr(e, "explanation", None) or e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def exec_timeout(command: str, timeout_s: float | None, default_s: float) -> float:
    """Validate an exec request and return its timeout.

    Raises:
        ConfigError: empty command, or a timeout <= 0 or over a week.
    """
    if not command or not command.strip():
        msg = "empty command; pass a shell command to run"
        raise ConfigError(msg)
    timeout = default_s if timeout_s is None else timeout_s
    if not 0 < timeout <= MAX_TIMEOUT_S:  # NaN fails too
        msg = f"timeout must be > 0 and at most {MAX_TIMEOUT_S:.0f} seconds (a week), got {timeout}"
        raise ConfigError(msg)
    return timeout


class DockerSandbox:
    """A Sandbox backed by one Docker container; use it as a context manager.

    Args:
        workspace: Host folder mounted read-write at `config.workspace_mount`;
            commands start there.
        config: Limits and hardening; defaults are the hardened values.
        memory_dir: Host folder mounted read-only at `config.memory_mount`.
        run_id: Labels the container (`tether.run`) so runs can be traced.
        client: A docker client to reuse; by default one is connected at start.
        limits: Deadline and depth of the host-side lending passes (`Handover`).
        lending_record: Where a lending of the workspace is recorded until it is given
            back, so the next sandbox on that workspace gives back what a crash kept.
        network: The egress proxy commands may be granted (`egress()`); None: no command ever has a way out.
    """

    def __init__(
        self,
        workspace: Path,
        config: DockerSandboxConfig | None = None,
        *,
        memory_dir: Path | None = None,
        run_id: str | None = None,
        client: docker.DockerClient | None = None,
        limits: WorkspaceLimits | None = None,
        lending_record: Path | None = None,
        network: SandboxNetwork | None = None,
    ) -> None:
        self.config = config or DockerSandboxConfig()
        self.limits = limits or WorkspaceLimits()
        self.workspace = check_folder(workspace, "workspace", writable=True)
        self.memory_dir = check_folder(memory_dir, "memory folder", writable=False) if memory_dir else None
        self.run_id = run_id or uuid.uuid4().hex[:12]
        self.user: str | None = None
        """uid:gid the commands run as, chosen at start."""
        self._handover: Handover | None = None
        self._record = LendingRecord(lending_record) if lending_record else None
        self.network = network
        self._has_python = False
        self._client = client
        self._container: Container | None = None
        self._shell = "bash"
        self._has_timeout = True
        self._own: set[tuple[int, int]] = set()
        """(pid, start) of the container's own processes after a restart (init, keep-alive), left out of
        `processes()`: the gate's baseline holds those of the first start, and these replaced them."""
        self._pids_file: Path | None = None
        self._refusals: int | None = None
        self.stream_scanner: Callable[[], Any] | None = None
        """Makes, per exec, an object with `feed(bytes)` and `close() -> list[str]` that sees the whole output."""
        self.notices: list[str] = []
        """What the person must be told about this sandbox's life (a hand-back that ran late)."""
        self._tools = executor_mount(self.config)
        """Host folder of the persistent executor's tools, or None: every command uses `docker exec`."""
        self._executor: Executor | None = None

    @property
    def container_id(self) -> str | None:
        """Id of the running container, None before start and after close."""
        return self._container.id if self._container else None

    def __enter__(self) -> DockerSandbox:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> DockerSandbox:
        """Create and start the container; on any failure remove what was created.

        Raises:
            EngineUnavailableError, ImageMissingError, ConfigError, SandboxError.
        """
        if self._container is not None:
            return self
        if self._client is None:
            self._client = connect(self.config.docker_host)
        ensure_image(self._client, self.config.image, pull_missing=self.config.pull_missing)
        if self._record is not None:
            reclaim(self.workspace, self._record, self.limits)  # an earlier run died with the workspace lent
        self.user, self._handover = sandbox_user(self.config.user, self.workspace, self.limits)
        if self._handover is not None:
            self._handover.record = self._record
        name = f"tether-{self.run_id}-{uuid.uuid4().hex[:6]}"
        cleanup.track(self)
        try:
            if self._handover is not None:
                self._handover.give()
            self._container = self._client.containers.run(**self._create_args(name))
            self._probe()
            self._pids_file = pids_file(self._container)
            self._refusals = fork_refusals(self._pids_file)
            self._executor_ready()
        except BaseException as e:  # Ctrl-C included: never leave a half-started container
            self._remove_by_name(name)
            self._container = None
            if self.network is not None:
                self.network.close()
            self._give_back()
            cleanup.untrack(self)
            if isinstance(e, docker_sdk().errors.DockerException):
                msg = f"sandbox container failed to start: {_reason(e)}; check the sandbox config"
                raise SandboxError(msg) from e
            raise
        log.debug("sandbox %s started as %s", name, self.user)
        return self

    def _create_args(self, name: str) -> dict[str, Any]:
        c = self.config
        volumes = {str(self.workspace): {"bind": c.workspace_mount, "mode": "rw"}}
        if self.memory_dir is not None:
            volumes[str(self.memory_dir)] = {"bind": c.memory_mount, "mode": "ro"}
        if self.network is not None:
            volumes.update(self.network.volume())
        args: dict[str, Any] = {
            "image": c.image,
            "command": ["sleep", "infinity"],
            "name": name,
            "detach": True,
            "labels": cleanup.owner_labels(self.run_id),
            "network_mode": c.network,
            "read_only": c.read_only_root,
            "tmpfs": {"/tmp": f"rw,nosuid,nodev,size={c.tmpfs_size},mode=1777"},
            "user": self.user,
            "pids_limit": c.pids_limit,
            "mem_limit": c.memory,
            "memswap_limit": c.memory,
            "nano_cpus": int(c.cpus * 1e9),
            "init": c.init,
            "working_dir": c.workspace_mount,
            "environment": {"HOME": SANDBOX_HOME, "TMPDIR": SANDBOX_HOME},
            "hostname": "sandbox",
            "volumes": volumes,
        }
        if self._tools is not None:
            volumes[str(self._tools)] = {"bind": EXECUTOR_MOUNT, "mode": "ro"}
        if c.cap_drop_all:
            args["cap_drop"] = ["ALL"]
        args["security_opt"] = [security_opt(allow_ptrace=c.allow_ptrace)]
        if c.no_new_privileges:
            args["security_opt"].append("no-new-privileges:true")
        return args

    def _probe(self) -> None:
        assert self._container is not None
        found: list[str] = []
        for _ in range(PROBE_TRIES):  # under load the engine may lose a short exec's output: ask again
            code, out = self._container.exec_run(["sh", "-c", PROBE])
            if code is None or code > 1:
                msg = f"image {self.config.image} cannot run /bin/sh (exit {code}); it needs a POSIX shell"
                raise SandboxError(msg)
            found = out.decode(errors="replace").split()
            if "probed" in found:
                break
        else:
            msg = f"sandbox {self._container.short_id} did not answer the start-up probe; retry, or check `docker info`"
            raise SandboxError(msg)
        self._shell = "bash" if "bash" in found else "sh"
        self._has_timeout = "timeout" in found
        self._has_python = "python3" in found
        if not self._has_timeout and "busybox-timeout" not in found:
            log.warning("image %s has no `timeout`; only the client-side deadline applies", self.config.image)

    def _remove_by_name(self, name: str) -> None:
        if self._client is None:
            return
        errors = docker_sdk().errors
        try:
            self._client.api.remove_container(name, force=True)
        except errors.NotFound:
            pass  # creation never got that far
        except errors.APIError as e:
            log.warning("could not remove %s after a failed start: %s", name, e)

    def exec(self, command: str, *, timeout_s: float | None = None, cwd: str | None = None) -> ExecResult:
        """Run `command` with bash (sh when the image lacks bash); never raises for a non-zero exit.

        Raises:
            ConfigError: empty command, or a timeout <= 0 or over a week.
            SandboxError: not started, or the engine failed.
        """
        timeout = exec_timeout(command, timeout_s, self.config.default_timeout_s)
        if self._container is None or self._client is None:
            msg = "sandbox is not started; use it as a context manager or call start()"
            raise SandboxError(msg)
        mark = f"{MARK}={uuid.uuid4().hex}"
        workdir = posixpath.join(self.config.workspace_mount, cwd) if cwd else self.config.workspace_mount
        scanner = self.stream_scanner() if self.stream_scanner else None
        cap = OutputCap(self.config.output_limit_bytes, scanner.feed if scanner else None)
        before = pid_count(self._container, self._pids_file)
        granted = self.network is not None and self.network.granted
        executor = self._executor_ready() if "\0" not in command and not granted and not (
            before is not None and near_full(before, self.config.pids_limit)) else None  # a full table: as before;
        # a command granted the network runs under the egress forwarder through docker exec
        since = time.time()
        try:
            if executor is not None:
                exit_code, overran, duration = self._run_executor(executor, command, timeout, cap, workdir, mark)
            else:
                exit_code, overran, duration = self._run(
                    self._shell, command, timeout, cap, wrap=True, workdir=workdir, environment=[mark]
                )
        except ExecutorLostError as e:
            return self._executor_lost(e, command, cap, mark, since, scanner, timeout_s, cwd)
        except SandboxError as e:
            if not self._full():
                raise
            self._restart(f"processes filled its process table ({e})")
            result = self.exec(command, timeout_s=timeout_s, cwd=cwd)
            return result.model_copy(update={"output": PIDS_FREED.format(limit=self.config.pids_limit)
                                             + result.output})
        timed_out = overran or (exit_code in TIMEOUT_CODES and duration >= timeout)
        if timed_out:
            self._reap(mark, since)
        if overran and executor is not None and self._executor is executor:
            try:
                executor.settle()  # its relay ends once the reaped processes let go of the output
            except ExecutorLostError:
                self._drop_executor()
        note = ""
        if executor is not None and executor.oom_killed and not timed_out:
            what = "the command (exit 137)" if exit_code == 137 else "one of its processes"
            note = OOM_KILLED.format(limit=self.config.memory, what=what)
        if not timed_out and self._full():
            self._restart("processes filled its process table")
            if before is not None and before < self.config.pids_limit // 2:  # this command started them
                exit_code, note = exit_code or 137, PIDS_FULL.format(limit=self.config.pids_limit)
            elif exit_code in (1, 125, 126, 127) and (FORK_FAILED in cap.text()
                                                       or (exit_code == 126 and cap.text().startswith(NOT_STARTED))):
                # it never started: run it again
                result = self.exec(command, timeout_s=timeout_s, cwd=cwd)
                return result.model_copy(update={"output": PIDS_FREED.format(limit=self.config.pids_limit)
                                                 + result.output})
            else:
                note = PIDS_FREED_AFTER.format(limit=self.config.pids_limit)
        return ExecResult(
            command=command,
            exit_code=137 if exit_code is None else exit_code,
            output=cap.text() + note,
            duration_s=duration,
            timed_out=timed_out,
            dropped_bytes=cap.dropped,
            secrets=scanner.close() if scanner else [],
        )

    def _run(
        self, shell: str, command: str, timeout: float, cap: OutputCap, *, wrap: bool = False, **exec_args: Any
    ) -> tuple[int | None, bool, float]:
        """Exec `command` under `timeout -s KILL` with a client deadline: (exit code, overran, seconds).

        `wrap`: a command of the task's, run under the egress forwarder while a grant is open."""
        assert self._container is not None and self._client is not None
        argv = [shell, "-c", command]
        if wrap and self.network is not None:
            argv = self.network.wrap(argv)
        if self._has_timeout:
            argv = ["timeout", "-s", "KILL", str(math.ceil(timeout)), *argv]
        api = self._client.api
        start = time.monotonic()
        try:
            exec_id = api.exec_create(self._container.id, argv, **exec_args)["Id"]
            overran = copy_stream(api.exec_start(exec_id, socket=True), cap, self._deadline(start, timeout))
            exit_code = 137 if overran else api.exec_inspect(exec_id)["ExitCode"]
        except docker_sdk().errors.DockerException as e:
            msg = f"exec failed in sandbox {self._container.short_id}: {_reason(e)}"
            raise SandboxError(msg) from e
        except OSError as e:  # the engine's socket closed or refused: the engine went away mid-command
            msg = (f"the Docker engine went away while sandbox {self._container.short_id} ran a command "
                   f"({_reason(e)}); its result is unknown; start the engine (`docker info` to check)")
            raise EngineLostError(msg) from e
        return exit_code, overran, time.monotonic() - start

    def _deadline(self, start: float, timeout: float) -> float:
        """When the client stops a command: past the in-container `timeout` by the grace, or at the timeout itself
        where there is none (then the client's deadline and `_reap` are what stop it)."""
        return start + timeout + (self.config.kill_grace_s if self._has_timeout else 0.0)

    @contextmanager
    def egress(self, hosts: Iterable[str]) -> Iterator[list[ConnectionRecord]]:
        """Open the way out to `hosts` for the commands run inside the block; yields what they connected to.

        Raises:
            SandboxError: this sandbox has no egress proxy, its image has no python3, or a host is malformed.
        """
        if self.network is None:
            msg = "this sandbox has no network (`--network off`, or no egress proxy configured)"
            raise SandboxError(msg)
        if self._container is not None and not self._has_python:
            msg = (f"image {self.config.image} has no python3, which the egress forwarder needs; "
                   "use the Debian image (`tether sandbox build`)")
            raise SandboxError(msg)
        with self.network.grant(hosts) as records:
            yield records

    def _run_executor(
        self, executor: Executor, command: str, timeout: float, cap: OutputCap, workdir: str, mark: str
    ) -> tuple[int, bool, float]:
        """Run `command` through the persistent executor: (exit code, overran, seconds)."""
        start = time.monotonic()
        code, overran = executor.run(command, workdir, math.ceil(timeout) if self._has_timeout else 0, mark, cap,
                                     self._deadline(start, timeout))
        return code, overran, time.monotonic() - start

    def _executor_ready(self) -> Executor | None:
        """The running executor, started when there is none; None when commands go through `docker exec`."""
        if self._executor is not None and self._executor.alive:
            return self._executor
        self._drop_executor()
        if self._tools is None or self._container is None or self._client is None:
            return None
        try:
            self._executor = Executor(self._client.api, self._container.id, self._shell, self._has_timeout)
        except (ExecutorLostError, docker_sdk().errors.DockerException, OSError) as e:
            log.warning("sandbox %s: the persistent executor did not start (%s); its commands use docker exec",
                        self._container.short_id, _reason(e))
            self._tools = None  # not again for this sandbox: every start would cost a hello timeout
            return None
        return self._executor

    def _drop_executor(self) -> None:
        executor, self._executor = self._executor, None
        if executor is not None:
            executor.close()
            if self._container is not None and executor.running():
                kill_server(self._container, executor.key)

    def _executor_lost(self, e: ExecutorLostError, command: str, cap: OutputCap, mark: str, since: float,
                       scanner: Any, timeout_s: float | None, cwd: str | None) -> ExecResult:
        """Fail the command (its result is unknown), kill what it started, start the executor afresh."""
        assert self._container is not None and self._client is not None
        try:
            self._client.api.ping()
        except Exception as lost:  # noqa: BLE001 - any failure to reach the engine: it went away, as in _run
            msg = (f"the Docker engine went away while sandbox {self._container.short_id} ran a command "
                   f"({_reason(lost)}); its result is unknown; start the engine (`docker info` to check)")
            raise EngineLostError(msg) from e
        log.warning("sandbox %s: %s; restarting the executor", self._container.short_id, e)
        before = self._executor.oom_kills if self._executor is not None else None
        self._drop_executor()
        note, code = EXECUTOR_LOST.format(reason=e), 125
        if self._full():  # the server could not fork: free the table as the exec path does
            self._restart("processes filled its process table")
            if not e.started:  # it never ran: run it now
                result = self.exec(command, timeout_s=timeout_s, cwd=cwd)
                return result.model_copy(update={"output": PIDS_FREED.format(limit=self.config.pids_limit)
                                                 + result.output})
            note += PIDS_FREED_AFTER.format(limit=self.config.pids_limit)
        else:
            self._reap(mark, since)
            now = oom_kills(self._container) if before is not None else None
            if now is not None and before is not None and now > before:  # the OOM killer took the executor
                note, code = OOM_LOST.format(limit=self.config.memory), 137
        self._executor_ready()
        return ExecResult(command=command, exit_code=code, output=cap.text() + note,
                          duration_s=time.time() - since, dropped_bytes=cap.dropped,
                          secrets=scanner.close() if scanner else [])

    def processes(self) -> list[Proc]:
        """Every process in the container but the probe itself, told apart by pid (sandbox/processes.py).

        The probe runs as a uid no sandbox process has, so the commands can
        neither ptrace nor kill it.

        Raises:
            SandboxError: not started, the image has no bash, or the probe failed.
        """
        if self._container is None or self._client is None:
            msg = "sandbox is not started; use it as a context manager or call start()"
            raise SandboxError(msg)
        if self._shell != "bash":
            msg = f"image {self.config.image} has no bash; its processes cannot be listed"
            raise SandboxError(msg)
        user = probe_user(self.user)
        problem = ""
        for _ in range(PROBE_TRIES):  # a listing cut short (output lost under load) is asked again
            cap = OutputCap(PROBE_OUTPUT_BYTES)
            code, overran, _ = self._run("bash", PS_PROBE, PROBE_TIMEOUT_S, cap, workdir="/", user=user)
            if code != 0 or overran or cap.dropped:
                problem = f"exit {code}"
                continue
            try:
                own = self._own | ({self._executor.key} if self._executor is not None else set())
                return [p for p in parse(cap.text(), own_uid=int(user.split(":")[0])) if p.key not in own]
            except ValueError as e:
                problem = str(e)
        msg = f"process probe failed in sandbox {self._container.short_id}: {problem}"
        raise SandboxError(msg)

    def _reap(self, mark: str, since: float) -> None:
        """Kill every process of a timed-out exec: its marker, or started since (orphans included).

        When that fails (no bash, pids limit exhausted, a bomb outrunning the
        killer) the container is restarted: everything in it dies, /tmp is
        emptied, the workspace stays.
        """
        if self._container is None:
            return
        errors = docker_sdk().errors
        code = None
        if self._shell == "bash":
            try:
                code, _ = self._container.exec_run(reap_argv(since, mark))
            except errors.APIError as e:
                log.warning("reaping in %s failed: %s", self._container.short_id, _reason(e))
        if code == 0:
            return
        self._restart("leftovers of a timed-out command outran the killer")

    def _restart(self, why: str) -> None:
        """Restart the container (everything in it dies, /tmp is emptied, the workspace stays); note its own."""
        assert self._container is not None
        log.warning("sandbox %s: %s; restarting it", self._container.short_id, why)
        self._drop_executor()
        try:
            self._container.restart(timeout=0)
        except (docker_sdk().errors.APIError, OSError) as e:
            msg = f"could not restart sandbox {self._container.short_id} ({why}): {_reason(e)}"
            raise SandboxError(msg) from e
        self._own = set()
        if self._shell == "bash":
            try:
                self._own = {p.key for p in self.processes()}
            except SandboxError as e:
                log.warning("sandbox %s: its own processes could not be listed: %s", self._container.short_id, e)
        self._pids_file = pids_file(self._container)
        self._refusals = fork_refusals(self._pids_file)

    def _full(self) -> bool:
        """Whether processes fill the pids limit, or past half of it keep multiplying or had forks refused (a bomb)."""
        limit = self.config.pids_limit
        count = pid_count(self._container, self._pids_file)
        refusals, self._refusals = self._refusals, fork_refusals(self._pids_file)
        if count is None or count < limit // 2:
            return False
        if near_full(count, limit) or (self._refusals or 0) > (refusals or 0):
            return True
        time.sleep(RUNAWAY_WAIT_S)
        again = pid_count(self._container, self._pids_file)
        return again is not None and (near_full(again, limit) or again > count + 2)

    def close(self) -> None:
        """Remove the container (killing what runs in it); safe to call twice."""
        if self._executor is not None:
            self._executor.close()  # the container's removal ends the server
            self._executor = None
        container, self._container = self._container, None
        try:
            if container is not None:
                errors = docker_sdk().errors
                try:
                    container.remove(force=True)
                except errors.NotFound:
                    pass  # already gone, e.g. collected by `tether sandbox gc --all`
                except (errors.APIError, OSError) as e:  # OSError: the engine went away
                    msg = f"could not remove sandbox container {container.short_id}: {_reason(e)}"
                    raise SandboxError(msg) from e
        finally:
            if self.network is not None:
                self.network.close()
            self._give_back()
            cleanup.untrack(self)

    def _give_back(self) -> None:
        handover, self._handover = self._handover, None
        if handover is not None:
            handover.take_back()
            if handover.late_s is not None:
                self.notices.append(
                    f"handing {self.workspace} back to its owner took {handover.late_s:.0f} s, past "
                    f"workspace.host_pass_seconds ({self.limits.host_pass_seconds:g} s); it was finished anyway: "
                    "every entry has its owner again")
