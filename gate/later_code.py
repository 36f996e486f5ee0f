"""What the person's own tools run later from files the run wrote: recipes, task and CI commands, build scripts.

Why: a run can do the work and also leave a line that runs when the person
types `make build`, `tox`, `pip install .`, `docker compose up` or pushes to
CI, on the person's machine or with the repository's secrets. The places
whose mere change is a finding (git hooks, `.envrc`, `.pth`, ...) are
common.hostexec's; these files change in honest work all the time, so what
is judged is what the run added to them: each new shell line (a Makefile
recipe, tox `commands`, a CI `run:` step, a package.json script, a
justfile/Taskfile command) goes through the guardian as if typed on the
person's machine, and each added line of a Python file tools import
(`setup.py`, `conftest.py`, `noxfile.py`, Sphinx's `conf.py`, an in-tree
build backend) is searched for code that runs programs or reaches outside
the folder. Options that make pip install from elsewhere, a container
given the host, and a `.env` line that is a command (autoenv sources it)
are findings by themselves. A finding is a review line, never a silent pass.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Iterable, Iterator
from pathlib import Path

import yaml

from tether.common.walk import read_rel
from tether.guardian.checker import check
from tether.guardian.verdict import CheckContext

READ_CAP = 512_000
MAX_LINES = 400
PREFIX = "code that runs on your machine later: "
MAKE_FILE = re.compile(r"(?:^|/)(?:GNUmakefile|makefile|Makefile|[\w.-]+\.mk)$")
TOX_FILE = re.compile(r"(?:^|/)(?:tox\.ini|setup\.cfg)$")
CI_FILE = re.compile(r"(?:^|/)\.github/workflows/[^/]+\.ya?ml$|(?:^|/)\.gitlab-ci\.ya?ml$"
                     r"|(?:^|/)\.circleci/[^/]+\.ya?ml$|(?:^|/)(?:azure-pipelines|bitbucket-pipelines|\.travis|\.drone|\.woodpecker)\.ya?ml$"
                     r"|(?:^|/)[Tt]askfile(?:\.dist)?\.ya?ml$|(?:^|/)\.pre-commit-hooks\.ya?ml$")
COMPOSE_FILE = re.compile(r"(?:^|/)(?:docker-)?compose(?:\.[\w-]+)?\.ya?ml$")
JUST_FILE = re.compile(r"(?:^|/)(?:[Jj]ustfile|\.justfile)$")
PY_TOOL_FILE = re.compile(r"(?:^|/)(?:setup|conftest|noxfile|fabfile|dodo|pavement)\.py$"
                          r"|(?:^|/)docs?/(?:source/)?conf\.py$")
REQUIREMENTS = re.compile(r"(?:^|/)(?:[\w.-]*requirements[\w.-]*|constraints[\w.-]*)\.(?:txt|in)$")
ENV_FILE = re.compile(r"(?:^|/)\.env(?:\.[\w.-]+)?$")
RUN_KEYS = frozenset({"run", "script", "before_script", "after_script", "command", "commands", "cmd", "cmds",
                      "entry", "steps"})
"""YAML keys whose string values a CI system or task runner hands to a shell."""
SHELL_RISK = ("CONF-", "PERSIST-", "FS-", "CRED-", "EXFIL-", "HOSTEXEC-", "PRIV-", "SYS-", "DISK-", "ESC-", "REV-")
"""Rule families whose `ask` on a line the person's tools run later is a finding (an install or a git command in a
recipe asks too, and is the person's to run; so does a program named by a make variable, `$(CC)`)."""
PY_RUNS = re.compile(
    r"\b(?:os\.(?:system|popen|exec\w*|spawn\w*|remove|unlink|rmdir|removedirs|_exit)|subprocess|pty\b|socket\b|"
    r"urllib|http\.client|requests\.|shutil\.rmtree|__import__|getattr\(\s*(?:os|__import__)|exec\(|eval\(|"
    r"compile\(|expanduser|Path\.home|environ\[.HOME|marshal|base64|codecs\.decode|ctypes)"
    r"|~/|\.bashrc|\.profile|\.zshrc|\.ssh/|crontab|/etc/")
"""What a Python file tools import should not gain without a person seeing it."""
PIP_ELSEWHERE = re.compile(r"^\s*(?:-i|--index-url|--extra-index-url|-f|--find-links|--trusted-host|--pre\b|"
                           r"-e\s+(?:/|\.\.|~)|--editable\s+(?:/|\.\.|~))|(?:git|hg|svn|bzr)\+|@\s*(?:https?|file):|"
                           r"^\s*(?:https?|file)://")
COMPOSE_HOST = re.compile(r"^\s*(?:privileged:\s*true|network_mode:\s*[\"']?host|pid:\s*[\"']?host|ipc:\s*[\"']?host|"
                          r"userns_mode:\s*[\"']?host|cap_add:|devices:|security_opt:.*unconfined)"
                          r"|^\s*-\s*[\"']?(?:/(?:[:\"']|[^.\s:][^:\s]*:)|~|\$\{?HOME|/var/run/docker\.sock)")
ENV_LINE = re.compile(r"^\s*(?:#.*|(?:export\s+)?[A-Za-z_][A-Za-z0-9_.-]*\s*=.*|)$")


def later_code(written: Iterable[str], workspace: Path, snapshot: Path | None, home: Path | None = None) -> list[str]:
    """Review lines for what the run added to files the person's tools run later (`written`: files it changed)."""
    context = CheckContext(workspace=workspace, home=home or Path.home())
    backend = _backend_modules(workspace)
    included = _make_includes(written, workspace)
    out: list[str] = []
    for rel in sorted(written):
        new = _text(workspace, rel)
        if new is None:
            continue
        old = _text(snapshot, rel) if snapshot is not None else None
        out += _judge(rel, old or "", new, context, backend, included)
    return out


def _make_includes(written: Iterable[str], workspace: Path) -> frozenset[str]:
    """Files a written makefile reads as makefile text (`include build.conf`, `-include .deps`): their recipes run on
    `make` as the makefile's own do, whatever they are named."""
    out: set[str] = set()
    for rel in written:
        if not MAKE_FILE.search(rel):
            continue
        folder = rel.rsplit("/", 1)[0] + "/" if "/" in rel else ""
        for line in (_text(workspace, rel) or "").splitlines():
            if m := re.match(r"^\s*[-s]?include\s+(.+)$", line):
                out.update(folder + w.removeprefix("./") for w in m.group(1).split() if "$" not in w)
    return frozenset(out)


def _text(root: Path | None, rel: str) -> str | None:
    data = read_rel(root, rel, READ_CAP) if root is not None else None
    return None if data is None else data.decode("utf-8", "replace")


def _judge(rel: str, old: str, new: str, context: CheckContext, backend: frozenset[str],
           included: frozenset[str]) -> list[str]:
    if MAKE_FILE.search(rel) or rel in included:
        return _shell(rel, "`make` on your machine", _added(_recipes(old), _recipes(new)), context)
    if JUST_FILE.search(rel):
        return _shell(rel, "`just` on your machine", _added(_indented(old), _indented(new)), context)
    if TOX_FILE.search(rel):
        return _shell(rel, "`tox` on your machine", _added(_tox(old), _tox(new)), context)
    if CI_FILE.search(rel):
        ci = "your CI (with the repository's secrets) or task runner"
        return _shell(rel, ci, _added(_yaml_runs(old), _yaml_runs(new)), context)
    if rel.rsplit("/", 1)[-1] == "package.json":
        return _shell(rel, "`npm run` on your machine", _added(_scripts(old), _scripts(new)), context)
    if rel.rsplit("/", 1)[-1] == "pyproject.toml":
        return _pyproject(rel, old, new)
    if COMPOSE_FILE.search(rel):
        return [f"{PREFIX}{rel} gives a container the host (`{line.strip()[:120]}`), on `docker compose up`"
                for line in _added(old.splitlines(), new.splitlines()) if COMPOSE_HOST.search(line)][:5]
    if PY_TOOL_FILE.search(rel) or rel in backend:
        return [f"{PREFIX}{rel} gained `{line.strip()[:120]}`, which runs when a tool imports it (pip, pytest, nox, "
                "sphinx, invoke, ...)" for line in _added(old.splitlines(), new.splitlines()) if PY_RUNS.search(line)
                ][:5]
    if REQUIREMENTS.search(rel):
        return [f"{PREFIX}{rel} gained `{line.strip()[:120]}`: `pip install -r` then installs from elsewhere and "
                "runs that package's build" for line in _added(old.splitlines(), new.splitlines())
                if PIP_ELSEWHERE.search(line)][:5]
    if ENV_FILE.search(rel):
        return [f"{PREFIX}{rel} gained `{line.strip()[:120]}`, a command (autoenv and shells that source `.env` run "
                "it)" for line in _added(old.splitlines(), new.splitlines()) if not ENV_LINE.match(line)][:5]
    return []


def _added(old: Iterable[str], new: Iterable[str]) -> list[str]:
    before = {" ".join(line.split()) for line in old}
    seen: set[str] = set()
    out = []
    for line in new:
        key = " ".join(line.split())
        if key and key not in before and key not in seen:
            seen.add(key)
            out.append(line)
    return out[:MAX_LINES]


def _shell(rel: str, runs: str, lines: list[str], context: CheckContext) -> list[str]:
    out = []
    for line in lines:
        verdict = check(line, context)
        ids = [h.id for h in verdict.hits]
        if verdict.decision == "deny" or (verdict.decision == "ask" and any(i.startswith(SHELL_RISK) for i in ids)):
            out.append(f"{PREFIX}{rel} gained `{line.strip()[:120]}`, which {runs} runs (the guardian "
                       f"would {verdict.decision} it: {', '.join(ids[:3]) or 'unreadable'})")
    return out[:5]


def _recipes(text: str) -> Iterator[str]:
    """A makefile's recipe lines, with make's `$$` as the shell's `$` and `$(X)`/`${X}` as shell variables."""
    for line in _joined(text.splitlines()):
        if line.startswith("\t"):
            body = re.sub(r"\$[({](\w+)[)}]", r"$\1", line.lstrip("\t").lstrip("@-+")).replace("$$", "$")
            yield body


def _indented(text: str) -> Iterator[str]:
    for line in _joined(text.splitlines()):
        if line[:1] in (" ", "\t") and line.strip():
            yield line.strip().lstrip("@-")


def _joined(lines: list[str]) -> Iterator[str]:
    held = ""
    for line in lines:
        if line.endswith("\\"):
            held += line[:-1] + " "
            continue
        yield held + line
        held = ""
    if held:
        yield held


def _tox(text: str) -> Iterator[str]:
    """tox's `commands*` values, `{env:X}` as `$X`, `{posargs}` and other substitutions left out."""
    key = False
    for line in text.splitlines():
        if re.match(r"^\s*commands(?:_pre|_post)?\s*=", line):
            key, line = True, line.split("=", 1)[1]
        elif not line[:1].isspace():
            key = False
        if key and line.strip():
            cmd = re.sub(r"\{env:(\w+)(?::[^}]*)?\}", r"$\1", line.strip())
            yield re.sub(r"\{[\w:./-]*\}", "", cmd).lstrip("- ")


def _yaml_runs(text: str) -> list[str]:
    try:
        doc = yaml.safe_load(text) if text else None
    except yaml.YAMLError:
        return [line for line in text.splitlines() if re.match(r"^\s*-?\s*(?:run|script|cmd)\s*:", line)]
    secret_vars: set[str] = set()
    out: list[str] = []
    _walk(doc, False, out, secret_vars, 0)
    lines = []
    for block in out:
        block = re.sub(r"\$\{\{\s*(?:secrets\.\w+|github\.token|env\.\w*TOKEN\w*)\s*\}\}", "$GITHUB_TOKEN", block)
        block = re.sub(r"\$\{\{[^}]*\}\}", "x", block)
        for var in secret_vars:
            block = re.sub(rf"\$\{{?{re.escape(var)}\b\}}?", "$GITHUB_TOKEN", block)
        lines += [line for line in block.splitlines() if line.strip()]
    return lines


def _walk(node: object, runs: bool, out: list[str], secret_vars: set[str], depth: int) -> None:
    if depth > 40 or len(out) > MAX_LINES:
        return
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "env" and isinstance(v, dict):
                secret_vars.update(str(n) for n, val in v.items() if isinstance(val, str) and "secrets." in val)
            _walk(v, str(k) in RUN_KEYS, out, secret_vars, depth + 1)
    elif isinstance(node, list):
        for v in node:
            _walk(v, runs, out, secret_vars, depth + 1)
    elif isinstance(node, str) and runs:
        out.append(node)


def _scripts(text: str) -> list[str]:
    try:
        scripts = json.loads(text or "{}").get("scripts") or {}
    except (ValueError, AttributeError):
        return []
    return [str(v) for v in scripts.values()] if isinstance(scripts, dict) else []


def _pyproject(rel: str, old: str, new: str) -> list[str]:
    def backend(text: str) -> tuple[object, object]:
        try:
            system = tomllib.loads(text).get("build-system") or {}
        except (tomllib.TOMLDecodeError, AttributeError):
            return None, None
        return system.get("backend-path"), system.get("build-backend")

    (old_path, old_backend), (new_path, new_backend) = backend(old), backend(new)
    if new_path and (new_path, new_backend) != (old_path, old_backend):
        return [f"{PREFIX}{rel} now builds with the in-tree backend `{new_backend}` from {new_path}: `pip install .` "
                "runs that module's code"]
    return []


def _backend_modules(workspace: Path) -> frozenset[str]:
    """The files of the module an in-tree build backend names (pyproject's backend-path `.` and build-backend
    `calc_build`: calc_build.py or calc_build/__init__.py), read once per gate."""
    data = read_rel(workspace, "pyproject.toml", READ_CAP)
    if data is None:
        return frozenset()
    try:
        system = tomllib.loads(data.decode("utf-8", "replace")).get("build-system") or {}
    except tomllib.TOMLDecodeError:
        return frozenset()
    paths, name = system.get("backend-path") or [], str(system.get("build-backend") or "").split(":")[0]
    if not name or not isinstance(paths, list):
        return frozenset()
    module = name.replace(".", "/")
    folders = [p.strip("./") for p in paths if isinstance(p, str)]
    return frozenset(f"{f + '/' if f else ''}{module}{tail}" for f in folders for tail in (".py", "/__init__.py"))
