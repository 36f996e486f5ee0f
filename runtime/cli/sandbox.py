"""`tether sandbox ...`: build the image, run one command, collect leftovers, diagnose.

Each command parses, builds config, calls one function of `sandbox.commands`
and prints; `--json` prints one object on stdout, messages go to stderr.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from tether.common.errors import TetherError
from tether.runtime.cli.common import (
    HomeOption,
    JsonOption,
    err,
    errors_exit,
    fail,
    out,
    print_json,
)
from tether.runtime.config import TetherConfig, load_config
from tether.runtime.terminal import plain, safe
from tether.sandbox import cleanup, commands

CUSTOM_TAG = "tether-sandbox:custom"
sandbox_app = typer.Typer(help="Docker sandbox: image, one-off commands, cleanup, diagnosis.", no_args_is_help=True)


def _config(home: Path | None, **sandbox_overrides: Any) -> TetherConfig:
    overrides = {"sandbox": {k: v for k, v in sandbox_overrides.items() if v is not None}}
    try:
        cfg = load_config(home, overrides=overrides)
    except TetherError as e:
        fail(str(e))
        raise  # unreachable: fail() raises
    from tether.runtime.workspace.handback import settle_lendings

    for note in settle_lendings(cfg.home, cfg.workspace):
        err.print(f"[bold yellow]hand-back:[/] {safe(note)}")
    return cfg


@sandbox_app.command()
def build(
    tiny: Annotated[bool, typer.Option("--tiny", help="Build the tiny busybox test image instead.")] = False,
    force: Annotated[bool, typer.Option("--force", help="Rebuild even when the image exists.")] = False,
    dockerfile: Annotated[
        Path | None, typer.Option("--dockerfile", help="Build DIR/Dockerfile instead (e.g. a task's environment/).")
    ] = None,
    tag: Annotated[str | None, typer.Option(
        "--tag", help=f"Tag of the image built (--dockerfile: {CUSTOM_TAG}; --packages: the base's own tag).")] = None,
    build_network: Annotated[
        bool,
        typer.Option("--build-network", help="Build --dockerfile through the egress proxy: each RUN step reaches the "
                                             "hosts its line names and `[network] allow` (docs/network.md)."),
    ] = False,
    packages: Annotated[list[str] | None, typer.Option(
        "--packages", help="Add Debian packages (NAME or NAME=VERSION; more may follow) to the sandbox image: apt-get "
                           "runs through the egress proxy, open to the image's apt sources and `[network] allow`.")
    ] = None,
    names: Annotated[list[str] | None, typer.Argument(help="More package names, after --packages.")] = None,
    base: Annotated[str | None, typer.Option(
        "--base", help="Image --packages adds to (default: `[sandbox] image`, tether-sandbox:debian).")] = None,
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """Build the sandbox image locally (Debian via debootstrap, no registry needed), a Dockerfile's, or add packages."""
    cfg = _config(home)
    if packages is not None or names or base is not None:
        if dockerfile is not None or tiny or build_network:
            fail("--packages adds to an image; it does not combine with --dockerfile, --tiny or --build-network")
        if packages is None and not names:
            fail("--base names the image --packages adds to; pass the names too (`--packages NAME...`)")
        if packages is None:
            fail(f"installing {' '.join(names or [])[:80]} opens the network: pass the names after --packages "
                 "(`tether sandbox build --packages NAME...`)")
        _build_packages(cfg, [*(packages or []), *(names or [])], base or cfg.sandbox.image, tag, as_json)
        return
    if dockerfile is not None or build_network:
        _build_dockerfile(cfg, dockerfile, tag or CUSTOM_TAG, build_network, as_json)
        return
    if not tiny:
        err.print("ensuring the Debian image (a debootstrap build takes a few minutes when it is missing)")
    with errors_exit():
        result = commands.build(cfg.sandbox, tiny=tiny, force=force)
    if as_json:
        print_json(result.model_dump())
    elif result.built:
        out.print(f"built {result.tag} in {result.seconds:.1f} s")
    else:
        out.print(f"{result.tag} already present (use --force to rebuild)")


def _build_dockerfile(cfg: TetherConfig, folder: Path | None, tag: str, network: bool, as_json: bool) -> None:
    import time

    from tether.sandbox.config import DockerSandboxConfig

    if folder is None or not (folder / "Dockerfile").is_file():
        fail("pass --dockerfile DIR, a folder holding a Dockerfile (--build-network builds one through the proxy)")
    try:
        DockerSandboxConfig(image=tag)
    except ValueError:
        fail(f"--tag {tag!r} is not an image name like `repo:tag`")
    start = time.monotonic()
    records: list[Any] = []
    with errors_exit():
        from tether.sandbox.engine import connect

        client = connect(cfg.sandbox.docker_host)
        if network:
            from tether.runtime.network_build import build_through_proxy

            records = build_through_proxy(cfg, client, folder.resolve(), tag)
        else:
            from tether.sandbox.images import build_dockerfile

            build_dockerfile(client, folder.resolve(), tag)
    refused = [r for r in records if not r.allowed]
    if as_json:
        print_json({"tag": tag, "built": True, "seconds": round(time.monotonic() - start, 1),
                    "connections": len(records), "refused": [f"{r.host}:{r.port}: {r.reason}" for r in refused]})
        return
    out.print(f"built {safe(tag)} in {time.monotonic() - start:.1f} s"
              + (f" ({len(records)} connection(s) through the proxy, {len(refused)} refused)" if network else ""))
    for r in refused[:10]:
        err.print(f"[yellow]refused[/] {safe(r.host)}:{r.port}: {safe(r.reason)}")


def _build_packages(cfg: TetherConfig, values: list[str], base: str, tag: str | None, as_json: bool) -> None:
    import dataclasses
    import datetime
    import json

    from tether.sandbox.config import DockerSandboxConfig
    from tether.sandbox.errors import SandboxError
    from tether.sandbox.packages import parse_names

    tag = tag or base
    try:
        names = parse_names(values)
    except SandboxError as e:
        fail(str(e))
    try:
        DockerSandboxConfig(image=tag)
    except ValueError:
        fail(f"--tag {tag!r} is not an image name like `repo:tag`")
    if not as_json:
        err.print(f"adding {safe(' '.join(names))} to {safe(base)}: apt-get runs through the egress proxy")
    with errors_exit():
        from tether.runtime.network_build import install_packages_through_proxy
        from tether.sandbox.engine import connect

        result = install_packages_through_proxy(cfg, connect(cfg.sandbox.docker_host), base, tag, names)
    refused = [r for r in result.records if not r.allowed]
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y%m%dT%H%M%SZ")
    record = cfg.home / "builds" / f"{stamp}-packages.json"
    report = {"tag": tag, "built": True, "base": base, "packages": names, "seconds": round(result.seconds, 1),
              "hosts": result.hosts, "connections": len(result.records),
              "refused": [f"{r.host}:{r.port}: {r.reason}" for r in refused], "record": str(record)}
    record.parent.mkdir(parents=True, exist_ok=True)
    connections = [dataclasses.asdict(r) for r in result.records]
    record.write_text(json.dumps({**report, "connections": connections}, indent=1) + "\n")
    if as_json:
        print_json(report)
        return
    out.print(f"built {safe(tag)} with {safe(' '.join(names))} in {result.seconds:.1f} s; the proxy was open to "
              f"{safe(', '.join(result.hosts) or 'no host')} ({len(result.records)} connection(s), "
              f"{len(refused)} refused; record {safe(str(record))})")
    for r in refused[:10]:
        err.print(f"[yellow]refused[/] {safe(r.host)}:{r.port}: {safe(r.reason)}")
    if tag != cfg.sandbox.image:
        err.print(safe(f"sandboxes use it with `[sandbox] image = \"{tag}\"` in tether.toml "
                       f"(or TETHER_SANDBOX__IMAGE={tag})"))


@sandbox_app.command("exec")
def exec_(
    command: Annotated[list[str], typer.Argument(help="Command after `--`; one argument is a shell string.")],
    workspace: Annotated[
        Path | None, typer.Option("--workspace", help="Host folder mounted read-write (default: a scratch folder).")
    ] = None,
    timeout: Annotated[float | None, typer.Option("--timeout", help="Seconds before the command is killed.")] = None,
    image: Annotated[str | None, typer.Option("--image", help="Sandbox image to use.")] = None,
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """Run one command in a fresh hardened sandbox and exit with its exit code."""
    from tether.runtime.workspace.lock import WorkspaceLock

    line = command[0] if len(command) == 1 else shlex.join(command)
    cfg = _config(home, image=image)
    cleanup.install_signal_handlers()
    notices: list[str] = []
    try:
        with errors_exit():
            lent = workspace is not None and workspace.is_dir()  # one live user of a workspace, this one included
            lock = WorkspaceLock(cfg.home, workspace, "sandbox:exec").acquire() if lent and workspace else None
            try:
                result = commands.run_once(cfg.sandbox, line, workspace=workspace, timeout_s=timeout, notices=notices)
            finally:
                if lock is not None:
                    lock.release()
    except KeyboardInterrupt:
        fail("interrupted; the sandbox was removed", 130)
    for note in notices:
        err.print(f"[bold yellow]note:[/] {safe(note)}")
    if as_json:
        print_json(result.model_dump())
    else:
        # Raw when piped (it is data); on a terminal the sandbox must not drive it.
        sys.stdout.write(plain(result.output) if sys.stdout.isatty() else result.output)
        sys.stdout.flush()
        if result.dropped_bytes:
            err.print(f"note: {result.dropped_bytes} bytes of output dropped from the middle")
        if result.timed_out:
            err.print(f"error: timed out after {result.duration_s:.1f} s; the command was killed")
    raise typer.Exit(result.exit_code)


@sandbox_app.command()
def gc(
    all_: Annotated[bool, typer.Option("--all", help="Remove every Tether container, live owners too.")] = False,
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """Remove Tether containers whose owner process is gone."""
    cfg = _config(home)
    with errors_exit():
        found = commands.gc(cfg.sandbox, everything=all_)
    removed = [c for c in found if c.removed]
    if as_json:
        print_json(
            {"removed": [c.model_dump() for c in removed], "kept": [c.model_dump() for c in found if not c.removed]}
        )
        return
    for c in found:
        out.print(
            safe(f"{'removed' if c.removed else 'kept   '} {c.name} (run {c.run}, owner pid {c.owner_pid}, {c.status})")
        )
    out.print(f"{len(removed)} removed, {len(found) - len(removed)} kept")


@sandbox_app.command()
def doctor(
    image: Annotated[str | None, typer.Option("--image", help="Sandbox image to check.")] = None,
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """Check that a sandbox can start; print what is missing and the command that fixes it."""
    cfg = _config(home, image=image)
    checks = commands.doctor(cfg.sandbox)
    ok = bool(checks) and all(c.ok for c in checks) and checks[-1].name == "sandbox"
    if as_json:
        print_json({"ok": ok, "checks": [c.model_dump() for c in checks]})
    else:
        for c in checks:
            mark = "[green]ok[/]  " if c.ok else "[red]FAIL[/]"
            out.print(f"{mark} {c.name}: {safe(c.detail)}", markup=True)
            if c.fix:
                out.print(f"      fix: {safe(c.fix)}")
    raise typer.Exit(0 if ok else 1)


def register(app: typer.Typer) -> None:
    """Add this area's commands to the main app."""
    app.add_typer(sandbox_app, name="sandbox")


if (
    __name__ == "__main__"
):  # `python -m tether.runtime.cli.sandbox ...` = `tether sandbox ...` without the other areas' imports
    from tether.runtime.terminal import install_log_filter

    install_log_filter()
    sandbox_app(prog_name="tether sandbox")
