"""CLI: `tether hook AGENT` (the hook itself) and `tether hook install|uninstall|status|doctor|log|serve`.

`tether hook AGENT` normally runs through `runtime.cli.hook_fast` before typer
is imported; the commands here are its `--help` and everything around it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from tether.runtime.agents import doctor as agent_doctor
from tether.runtime.agents import log as hook_log
from tether.runtime.agents import settings
from tether.runtime.agents.registry import NAMES
from tether.runtime.cli import hook_fast
from tether.runtime.cli.common import HomeOption, JsonOption, config, err, errors_exit, fail, out, print_json
from tether.runtime.terminal import safe

hook_app = typer.Typer(help="The guardian as a hook of other agents (Claude Code, Codex CLI, Gemini CLI, Cursor, "
                            "OpenCode).",
                       no_args_is_help=True)
AgentArg = Annotated[str, typer.Argument(help=f"The agent: {', '.join(NAMES)}.")]
ScopeOption = Annotated[str, typer.Option("--scope", help="user (your home), project, or local (Claude Code).")]
ProjectOption = Annotated[Path | None, typer.Option("--project", help="Project folder (default: cwd).")]
UserHomeOption = Annotated[Path | None, typer.Option("--user-home", help="The person's home (default: ~).")]
DryRunOption = Annotated[bool, typer.Option("--dry-run", help="Show the change; write nothing.")]


def _agent(name: str) -> str:
    if name not in NAMES:
        fail(f"unknown agent {name!r}; known agents: {', '.join(NAMES)}")
    return name


def _path(agent: str, scope: str, project: Path | None, user_home: Path | None) -> Path:
    with errors_exit():
        return settings.settings_path(agent, scope, (project or Path.cwd()).absolute(),
                                      (user_home or Path.home()).absolute())
    raise AssertionError


def _show(change: settings.Change, json_out: bool) -> None:
    if json_out:
        print_json({"agent": change.agent, "path": str(change.path), "action": change.action,
                    "dry_run": change.dry_run, "backup": str(change.backup) if change.backup else None,
                    "diff": change.diff()})
        return
    if change.dry_run and change.before != change.after:
        out.print(safe(change.diff()), end="")
    verb = {"installed": "added the Tether hook to", "uninstalled": "removed the Tether hook from",
            "already-installed": "the Tether hook is already in", "not-installed": "no Tether hook in"}[change.action]
    note = " (dry run: nothing written)" if change.dry_run else ""
    err.print(f"{safe(change.agent)}: {verb} {safe(change.path)}{note}"
              + (f"; backup: {safe(change.backup)}" if change.backup else ""))


@hook_app.command("install")
def install(agent: AgentArg, scope: ScopeOption = "user", project: ProjectOption = None,
            user_home: UserHomeOption = None, dry_run: DryRunOption = False,
            command: Annotated[str | None, typer.Option("--command", help="Command line the agent runs.")] = None,
            shadow: Annotated[bool, typer.Option(
                "--shadow", help="Block nothing; record what would have been done (tether audit --agents).")] = False,
            home: HomeOption = None, json_out: JsonOption = False) -> None:
    """Add the hook to the agent's settings file, leaving the rest of the file as it is (backup first)."""
    cfg = config(home)
    path = _path(_agent(agent), scope, project, user_home)
    if shadow:
        command = (command or settings.default_command(agent)) + " --shadow"
    with errors_exit():
        _show(settings.install(agent, path, cfg.home, command, dry_run), json_out)


@hook_app.command("uninstall")
def uninstall(agent: AgentArg, scope: ScopeOption = "user", project: ProjectOption = None,
              user_home: UserHomeOption = None, dry_run: DryRunOption = False, home: HomeOption = None,
              json_out: JsonOption = False) -> None:
    """Remove Tether's hook from the agent's settings file (the bytes it added; never an entry of yours)."""
    cfg = config(home)
    path = _path(_agent(agent), scope, project, user_home)
    with errors_exit():
        _show(settings.uninstall(agent, path, cfg.home, dry_run), json_out)


@hook_app.command("status")
def status(agent: Annotated[str | None, typer.Argument(help="One agent (default: all).")] = None,
           project: ProjectOption = None, user_home: UserHomeOption = None, home: HomeOption = None,
           json_out: JsonOption = False) -> None:
    """Where each agent's hook is installed (user and project settings): only entries Tether wrote count."""
    cfg = config(home)
    rows = []
    for name in [_agent(agent)] if agent else list(NAMES):
        for scope in settings.registry.get(name).SETTINGS:  # type: ignore[attr-defined]
            rows.append(settings.status(name, _path(name, scope, project, user_home), cfg.home) | {"scope": scope})
    if json_out:
        print_json({"hooks": rows})
        return
    for r in rows:
        shadow = any(c.endswith("--shadow") for c in r.get("commands") or [])
        mark = ("shadow" if shadow else "installed") if r["installed"] else ("error" if r.get("error") else "-")
        mark = "disabled" if r.get("disabled") else mark
        note = f"  ({r['disabled']})" if r.get("disabled") else f"  (error: {r['error']})" if r.get("error") else ""
        if r.get("hand_made"):
            note += "  (hand-made entry, not Tether's: " + ", ".join(r["hand_made"]) + ")"
        out.print(f"{safe(r['agent']):<12} {r['scope']:<8} {mark:<10} {safe(r['path'])}{safe(note)}", markup=False)


@hook_app.command("doctor")
def doctor(agent: AgentArg, scope: ScopeOption = "user", project: ProjectOption = None,
           user_home: UserHomeOption = None, home: HomeOption = None, json_out: JsonOption = False) -> None:
    """Run the installed hook with a canary deny (rm -rf /, never executed): it must block; exit 0 when it does."""
    cfg = config(home)
    path = _path(_agent(agent), scope, project, user_home)
    others = [_path(agent, s, project, user_home) for s in settings.registry.get(agent).SETTINGS]  # type: ignore[attr-defined]
    report = agent_doctor.doctor(agent, path, (project or Path.cwd()).absolute(), cfg.home, others)
    if json_out:
        print_json(report)
    else:
        if report.get("problem"):
            err.print(safe(report["problem"]))
        for c in report["checks"]:
            out.print(f"{safe(c['command'])}\n  canary deny blocked: {'yes' if c['deny_blocked'] else 'NO'}"
                      f"\n  canary allow passed: {'yes' if c['allow_passed'] else 'NO'}", markup=False)
        out.print("ok: the hook blocks end to end" if report["ok"] else "NOT ok", markup=False)
    raise typer.Exit(0 if report["ok"] else 1)


@hook_app.command("log")
def log(agent: Annotated[str | None, typer.Option("--agent", help="Only this agent.")] = None,
        limit: Annotated[int, typer.Option("-n", help="How many of the newest records.")] = 50,
        home: HomeOption = None, json_out: JsonOption = False) -> None:
    """The newest host-side verdicts of the hooks (JSON lines under Tether's home, bounded)."""
    cfg = config(home)
    rows = [r for r in hook_log.read(cfg.home, 0) if agent is None or r.get("agent") == agent]
    rows = rows[-limit:] if limit > 0 else rows
    if json_out:
        print_json({"log": str(hook_log.path(cfg.home)), "records": rows})
        return
    if not rows:
        err.print(f"no hook verdicts yet in {safe(hook_log.path(cfg.home))}")
    for r in rows:
        command = r.get("command")
        text = command if isinstance(command, str) else " | ".join(map(str, command or []))
        out.print(f"{r.get('agent', '?'):<12} {str(r.get('decision') or '-'):<6} {','.join(r.get('rules') or []):<22} "
                  f"{text or r.get('error') or r.get('event') or ''}", markup=False)


@hook_app.command("rollback")
def rollback(kind: Annotated[str, typer.Argument(help="Action kind, e.g. outside-workspace:rm:CONF-001:parent.")],
             agent: Annotated[str, typer.Option("--agent", help="The agent whose action was undone.")] = "an agent",
             home: HomeOption = None) -> None:
    """You undid what an agent did under KIND: count a rollback in the trust ledger (it demotes the kind)."""
    from tether.runtime.agents import learn

    cfg = config(home)
    with errors_exit():
        kinds = learn.rollback(cfg.home, kind, agent)
    for k in kinds:
        err.print(f"{safe(k)}: rollback counted; it is asked again until it earns promotion anew")


@hook_app.command("serve")
def serve() -> None:
    """Keep the guardian loaded for the hook (started by the hook itself; exits when idle)."""
    raise typer.Exit(hook_fast.main(["serve"]) or 0)


def _agent_command(name: str) -> None:
    def run(shadow: Annotated[bool, typer.Option("--shadow", help="Block nothing; record for the audit.")] = False,
            ) -> None:
        raise typer.Exit(hook_fast.main([name, "--shadow"] if shadow else [name]) or 0)

    run.__doc__ = f"The {name} hook: read its payload on stdin, answer in its protocol (docs/hooks.md)."
    hook_app.command(name)(run)


for _name in NAMES:
    _agent_command(_name)


def register(app: typer.Typer) -> None:
    """Add `hook` to the main app."""
    app.add_typer(hook_app, name="hook")
