"""`tether guard --explain` and `tether guard --rules`: the guardian's reasons, in plain text or JSON.

Both run on the lean `tether guard` path (no typer or rich), and print through
`runtime.terminal.plain`, so nothing in a command reaches the terminal raw.
`--explain` judges the line exactly as `tether guard` does (the person's
machine, the same workspace, working folder and home): the same decision and
exit code. It also reads the configuration (`[network]`) and says what a
Tether run would add about the network for the line (`graphs.network`:
NET-010 ask naming the hosts it opens, NET-011/012 deny, NET-OFF, or the
hosts always allowed); that part is shown, and given in `--json` as
`network.run_decision`, but not counted: on the person's machine there is no
egress proxy to ask about.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

from tether.runtime.cli.guard_fast import EXIT, command_text, context, error
from tether.runtime.terminal import plain


def _out(lines: list[str]) -> None:
    sys.stdout.write("\n".join(plain(line) for line in lines) + "\n")
    sys.stdout.flush()


def explain(words: list[str], json_out: bool, workspace: Path | None, cwd: Path | None,
            home: Path | None, tether_home: Path | None = None) -> int:
    """Print why the command gets `tether guard`'s decision, and what a run would add about the network; the
    decision's exit code (0, 1, 2), the same as `tether guard`'s."""
    from tether.common.errors import TetherError
    from tether.guardian.explain import explain as run
    from tether.guardian.explain import render
    from tether.guardian.network_hosts import network_needs

    text = command_text(words)
    network: dict[str, object] = {"mode": None, "needs": False, "rule": None, "decision": None, "hosts": [],
                                  "always_allowed": []}
    rules = None
    if network_needs(text) is not None:  # only then is the config read (the rest of this path needs no pydantic)
        try:
            rules = _network_rules(tether_home)
        except TetherError as e:
            return error(str(e))
    e = run(text, context(workspace, cwd, home))
    if rules is not None:
        network = _network(e, rules, text)
    if json_out:
        sys.stdout.write(json.dumps({**dataclasses.asdict(e), "network": network}) + "\n")
        sys.stdout.flush()
    else:
        _out([*render(e), "", *_network_lines(network)])
    return EXIT[e.decision]


def _network_rules(tether_home: Path | None):  # type: ignore[no-untyped-def]
    from tether.graphs.network import NetworkRules
    from tether.guardian.network_hosts import NetworkDefaults
    from tether.runtime.config import load_config

    net = load_config(tether_home).network
    return NetworkRules(mode=net.mode, allow=tuple(net.allow), addresses=tuple(net.named_addresses()),
                        defaults=NetworkDefaults(pip_index_url=net.pip_index_url, npm_registry=net.npm_registry))


def _network(e, rules, text: str) -> dict[str, object]:  # type: ignore[no-untyped-def]
    """What a Tether run with this config would decide about the network for `text` (`e` is left as `tether guard`
    judges it: the person's machine has no egress proxy to ask about)."""
    from tether.graphs.network import network_verdict
    from tether.guardian.verdict import Verdict, strictest

    verdict, hosts = network_verdict(rules, text, Verdict(decision="allow"))
    hit = verdict.hits[0] if verdict.hits else None
    needs = hosts is not None or hit is not None
    return {"mode": rules.mode, "needs": needs, "rule": hit.id if hit else None,
            "decision": hit.decision if hit else ("allow" if needs else None), "hosts": hosts or [],
            "always_allowed": list(rules.allow), "reason": hit.reason if hit else None,
            "run_decision": strictest(e.decision, hit.decision) if hit else e.decision}


def _network_lines(n: dict[str, object]) -> list[str]:
    hosts = ", ".join(n["hosts"]) or "no host"  # type: ignore[arg-type]
    if not n["needs"]:
        return ["network in a Tether run: not needed (the command stays in the sandbox's network `none`)"]
    note = f"      (not counted above: the decision is this machine's; a run would give {n['run_decision']})"
    if n["rule"] == "NET-010":
        return [f"network in a Tether run: NET-010 asks; if approved, the egress proxy opens {hosts} for this "
                "command only", note, "      (a host you always allow goes in `[network] allow`; docs/network.md)"]
    if n["rule"]:
        return [f"network in a Tether run: denied ({n['rule']}); no way out is opened", note]
    return [f"network in a Tether run: no ask, every host is in `[network] allow`; the egress proxy opens {hosts}"]


def rules(json_out: bool) -> int:
    """List every rule of the registry with its safe alternative; exit 0."""
    from tether.guardian.alternatives import ALTERNATIVES
    from tether.guardian.rules import all_rules

    rows = [{"id": r.id, "category": r.category, "decision": r.decision, "program": r.program,
             "reason": r.reason, "example": r.example, "instead": ALTERNATIVES.get(r.id, "")}
            for r in all_rules()]
    if json_out:
        sys.stdout.write("".join(json.dumps(r) + "\n" for r in rows))
        sys.stdout.flush()
        return 0
    lines = []
    for r in rows:
        lines.append(f"{r['id']:<12} {r['decision']:<5} {r['category']:<24} {r['reason']}")
        lines.append(f"{'':<12} e.g. {r['example']}")
        if r["instead"]:
            lines.append(f"{'':<12} instead: {r['instead']}")
    _out(lines)
    return 0
