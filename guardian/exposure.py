"""What a command exposes: shells wired to sockets, served folders, sensitive destinations.

Parts:
    check: for one invocation, a shell piped to a network client (SHELL-008),
        a file server publishing /, a system folder or the home (EXFIL-005),
        copies into a folder judged at folder/name, and the destinations of
        rsync/scp/tar -C/unzip -d/git clone against the persistence and
        credential paths and system folders (without the write-depth policy).
    on_write: git hooks or git config of a repository outside the workspace
        (PERSIST-006).
"""

from __future__ import annotations

import fnmatch
import re

from tether.guardian.file_operands import rsync_operands
from tether.guardian.paths import SYSTEM, normalise, under
from tether.guardian.programs_table import SHELLS
from tether.guardian.rules import Inv
from tether.guardian.rules_paths import path_hits
from tether.guardian.targets import sensitive_targets
from tether.guardian.words import UNKNOWN

TYPE_CHECKING = False  # not typing's: the per-call hook imports this module, and typing costs it ~2.5 ms
if TYPE_CHECKING:
    from tether.guardian.analyse import Analyser

_GIT_HOOK = re.compile(r"/\.git/(?:hooks(?:/|$)|config$)")
_PYTHON = re.compile(r"^python[0-9.]*$")


def on_write(an: Analyser, path: str, prog: str) -> None:
    """Git hooks or git config of a repository outside the workspace: persistence."""
    if "/.git/" in path and _GIT_HOOK.search(path) and not under(path, an.ws):
        an._hit("PERSIST-006", prog, f"git hooks or config outside the workspace: {path}")


def check(an: Analyser, inv: Inv) -> None:
    """Sockets, served folders and sensitive destinations of one invocation."""
    if inv.prog in _NET_CLIENTS and _shell_upstream(inv.simple):
        an._hit("SHELL-008", inv.prog, "a shell's output is piped to a network connection")
    why = _served_shell(inv)
    if why:
        an._hit("SHELL-009", inv.prog, why)
    served = _served_dir(inv)
    if served is not None and UNKNOWN not in served:
        path = normalise(served, inv.simple.cwd, an.home)
        if path == "/" or path == an.home or under(an.ws, path) and path != an.ws or \
                any(under(path, d) for d in SYSTEM):
            an._hit("EXFIL-005", inv.prog, f"serves {path}")
    ops, excluded = rsync_operands(inv) if inv.prog == "rsync" else (inv.positional, [])
    if inv.prog in _COPIERS and len(ops) >= 2 and UNKNOWN not in ops[-1]:
        dest = normalise(ops[-1], inv.simple.cwd, an.home)
        for src in ops[:-1]:
            name = src.rstrip("/").rsplit("/", 1)[-1]
            if any(UNKNOWN not in x and fnmatch.fnmatchcase(name, x.strip("/")) for x in excluded):
                continue  # `rsync -a --exclude .git .git/ x`: what --exclude names is not copied
            if name and UNKNOWN not in name and name not in (".", ".."):
                for rule in path_hits(f"{dest}/{name}", "write"):
                    an._hit(rule.id, inv.prog, f"{dest}/{name}")
    for raw in sensitive_targets(inv):
        if UNKNOWN not in raw:
            path = normalise(raw, inv.simple.cwd, an.home)
            for rule in path_hits(path, "write"):
                an._hit(rule.id, inv.prog, path)
            if path == "/" or any(under(path, d) for d in SYSTEM):
                an._hit("SYS-001", inv.prog, path)
            elif path in ("/home", "/Users"):
                an._hit("FS-002", inv.prog, f"unpacks over every home folder: {path}")
            elif path == an.home or re.match(re.escape(an.home) + r"/\.[^/]+/?$", path):
                an._hit("CONF-001", inv.prog, f"unpacks into {path}")
            on_write(an, path, inv.prog)


_COPIERS = frozenset({"cp", "mv", "install", "ln", "rsync", "scp"})
_NET_CLIENTS = frozenset({"nc", "ncat", "netcat", "nc.traditional", "nc.openbsd", "telnet", "openssl",
                          "socat", "cryptcat", "sbd", "ssh"})


def _shell_upstream(s: object, depth: int = 0) -> bool:
    """Whether a shell reading its commands from stdin feeds this stage (sh -i | nc host)."""
    for u in getattr(s, "upstream", []) or []:
        if not u.argv or depth > 8:
            continue
        name = u.argv[0].rsplit("/", 1)[-1]
        if name in SHELLS and not any(a.startswith("-") and "c" in a[1:] for a in u.argv[1:]) \
                and not [a for a in u.argv[1:] if not a.startswith("-")]:
            return True
        if name in ("tee", "cat", "stdbuf") and _shell_upstream(u, depth + 1):
            return True
    return False


_SHELL_SERVERS = frozenset({"ttyd", "gotty", "tmate", "shellinaboxd", "shellinabox", "wetty", "wssh", "webssh",
                            "butterfly.server.py", "butterfly", "sshwifty", "upterm", "tty-share", "teleconsole"})
"""Programs whose job is a terminal served to a browser or a relay: a shell other hosts can type into."""
_NOTEBOOKS = frozenset({"jupyter", "jupyter-notebook", "jupyter-lab", "jupyter-server", "code-server",
                        "openvscode-server", "code", "voila", "marimo", "theia"})
"""Servers that give their users a terminal and code execution, safe only with a token and a local bind."""
_OPEN_BIND = re.compile(r"^--(?:ip|host|bind-addr|bind|NotebookApp\.ip|ServerApp\.ip|address)="
                        r"(?:0\.0\.0\.0|\*|::|\[::\])(?::\d+)?$")
_NO_AUTH = re.compile(r"^--(?:(?:NotebookApp|ServerApp|IdentityProvider)\.(?:token|password)=(?:''|\"\")?$|"
                      r"auth=none$|without-connection-token$|no-token$|disable-auth$|token=$)")


def _served_shell(inv: Inv) -> str:
    """A terminal server (ttyd, gotty, tmate...), or a notebook/IDE server bound to every
    address with its token or password turned off: SHELL-009."""
    name = inv.argv[0].rsplit("/", 1)[-1] if inv.argv else ""
    if name in _SHELL_SERVERS or inv.prog in _SHELL_SERVERS:
        return f"{name} serves a terminal to other hosts"
    if name not in _NOTEBOOKS and inv.prog not in _NOTEBOOKS:
        return ""
    args, joined = inv.args, []
    for i, a in enumerate(args):  # `--ip 0.0.0.0` as one word `--ip=0.0.0.0`
        nxt = args[i + 1] if i + 1 < len(args) else ""
        joined.append(f"{a}={nxt}" if a.startswith("--") and "=" not in a and nxt and not nxt.startswith("-")
                      and a[2:] in ("ip", "host", "bind-addr", "bind", "auth", "address") else a)
    if any(_OPEN_BIND.match(a) for a in joined) and any(_NO_AUTH.match(a) for a in joined):
        return f"{name} serves code execution on every address without a token"
    return ""


def _served_dir(inv: Inv) -> str | None:
    """The folder a one-line file server publishes (busybox httpd, python -m http.server,
    php -S, ruby -run -e httpd), or None."""
    a = inv.argv
    opt = lambda *names: next((a[i + 1] for i in range(len(a) - 1) if a[i] in names), None)  # noqa: E731
    if inv.prog == "httpd" or (inv.prog == "busybox" and a[1:2] == ["httpd"]):
        return opt("-h") or "."
    if _PYTHON.match(inv.prog) and any(m in a for m in ("http.server", "SimpleHTTPServer",
                                                                       "pyftpdlib")):
        return opt("--directory", "-d") or "."
    if inv.prog.startswith("php") and "-S" in a:
        return opt("-t") or "."
    if inv.prog == "ruby" and "httpd" in a:
        rest = [x for x in a[a.index("httpd") + 1 :] if not x.startswith("-") and not x.isdigit()]
        return rest[0] if rest else "."
    return None
