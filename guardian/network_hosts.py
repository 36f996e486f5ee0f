"""Which hosts a command line needs to reach: installs, fetches, clones and downloads.

`network_needs(command, defaults)` reads each simple command of the line
(after `VAR=value`, `sudo`, `env`, `timeout`, ... wrappers) and, for package
managers (pip, npm, yarn, pnpm, cargo, go, gem, bundle, uv, poetry), git's
remote verbs and downloaders (curl, wget, ...), names the hosts it opens:
the URL in the line, the index or registry named by an option or variable in
the line, else the configured default (`NetworkDefaults`), else the tool's
public default. `unknown` says a URL could not be read (a variable in it).
"""

from __future__ import annotations

import posixpath
import re
import shlex
from dataclasses import dataclass, field
from urllib.parse import urlsplit

_WRAPPERS = {"sudo": "ugCDhpRrT", "env": "uCS", "nice": "n", "timeout": "sk", "nohup": "", "time": "", "command": "",
             "exec": "", "stdbuf": "ioe", "ionice": "cnp", "doas": "u"}
_SEPARATORS = {";", "&&", "||", "|", "&", "|&", "(", ")", "{", "}", "\n"}
PYPI = ("pypi.org:443", "files.pythonhosted.org:443")
NPM = ("registry.npmjs.org:443",)
_DEFAULTS = {
    "cargo": ("index.crates.io:443", "static.crates.io:443", "crates.io:443"),
    "go": ("proxy.golang.org:443", "sum.golang.org:443"),
    "gem": ("rubygems.org:443", "index.rubygems.org:443"),
    "bundle": ("rubygems.org:443", "index.rubygems.org:443"),
    "yarn": ("registry.yarnpkg.com:443", *NPM),
    "apt-get": ("deb.debian.org:80", "security.debian.org:80", "archive.ubuntu.com:80", "security.ubuntu.com:80"),
}
_DEFAULTS["apt"] = _DEFAULTS["apt-get"]
_VERBS = {
    "pip": {"install", "download", "wheel", "index"}, "npm": {"install", "i", "ci", "add", "update", "up", "view",
                                                               "info", "outdated", "exec", "init", "pack"},
    "pnpm": {"install", "i", "add", "update", "up", "fetch", "dlx"}, "yarn": {"", "install", "add", "up",
                                                                               "upgrade", "dlx"},
    "cargo": {"fetch", "install", "update", "vendor", "generate-lockfile", "add", "search"},
    "go": {"get", "install", "mod"}, "gem": {"install", "fetch", "update"}, "bundle": {"", "install", "update"},
    "git": {"clone", "fetch", "pull", "ls-remote", "submodule"}, "uv": {"pip", "add", "sync", "lock"},
    "poetry": {"install", "add", "update", "lock"}, "pipx": {"install", "run"}, "npx": {"*"},
    "apt-get": {"update", "install", "upgrade", "dist-upgrade", "full-upgrade", "source", "download", "build-dep"},
    "apt": {"update", "install", "upgrade", "full-upgrade", "source", "download"},
}
_DOWNLOADERS = {"curl", "wget", "aria2c", "http", "https", "xh", "lwp-download"}
_URL_OPTS = {"pip": ("-i", "--index-url", "--extra-index-url", "-f", "--find-links"), "npm": ("--registry",),
             "pnpm": ("--registry",), "yarn": ("--registry",), "npx": ("--registry",), "uv": ("--index-url", "-i",
                                                                                           "--extra-index-url")}
_URL = re.compile(r"^[a-z][a-z0-9+.-]*://", re.I)
_SCP = re.compile(r"^(?:[\w.-]+@)?([\w.-]+\.[\w-]+|localhost):(?!//)")


@dataclass(frozen=True)
class NetworkDefaults:
    """Hosts named by configuration, not by the line: the person's pip index and npm registry."""

    pip_index_url: str = ""
    npm_registry: str = ""


@dataclass
class NetworkNeed:
    """What a command line would connect to."""

    programs: list[str] = field(default_factory=list)
    hosts: list[str] = field(default_factory=list)
    """`host:port` entries, for the egress proxy's allowlist."""
    unknown: bool = False
    """A URL in the line could not be read (it holds a variable or a substitution)."""
    unproxied: list[str] = field(default_factory=list)
    """Remotes the HTTP proxy cannot carry (ssh, git://, ftp)."""


def host_of(url: str) -> str | None:
    """`pypi.org:443` for `https://pypi.org/simple`; None when it is not an http(s) URL with a host."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return None
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return f"{host}:{port or (443 if parts.scheme.lower() == 'https' else 80)}"


def _segments(command: str) -> list[list[str]]:
    lex = shlex.shlex(command.replace("\n", " ; "), posix=True, punctuation_chars=";&|(){}")
    lex.whitespace_split = True
    out: list[list[str]] = [[]]
    for tok in lex:
        if tok in _SEPARATORS:
            out.append([])
        else:
            out[-1].append(tok)
    return [s for s in out if s]


def _unwrap(argv: list[str], env: dict[str, str]) -> list[str]:
    while argv:
        if "=" in argv[0] and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", argv[0]):
            name, _, value = argv[0].partition("=")
            env[name] = value
            argv = argv[1:]
            continue
        name = posixpath.basename(argv[0])
        if name not in _WRAPPERS:
            return argv
        valued, argv = _WRAPPERS[name], argv[1:]
        while argv and (argv[0].startswith("-") or (name == "timeout" and argv[0][:1].isdigit())
                        or (name == "env" and "=" in argv[0])):
            if name == "env" and "=" in argv[0] and not argv[0].startswith("-"):
                k, _, v = argv[0].partition("=")
                env[k] = v
            elif len(argv[0]) == 2 and argv[0][1] in valued and len(argv) > 1:
                argv = argv[1:]
            argv = argv[1:]
    return argv


def _program(argv: list[str]) -> tuple[str, list[str]]:
    """The tool and its arguments: `python3 -m pip install x` -> (`pip`, [install, x])."""
    prog = posixpath.basename(argv[0])
    if re.match(r"^(?:python|pypy)[0-9.]*$", prog) and argv[1:2] == ["-m"] and len(argv) > 2:
        return posixpath.basename(argv[2]), argv[3:]
    if re.match(r"^(?:python|pypy)[0-9.]*$", prog) and len(argv) > 1 and posixpath.basename(argv[1]) in ("pip", "pip3"):
        return "pip", argv[2:]  # pip run from its wheel or a checkout: `python3 pip.whl/pip install ...`
    prog = re.sub(r"^(pip)[0-9.]*$", r"\1", prog)
    return prog, argv[1:]


def _verb(args: list[str]) -> str:
    return next((a for a in args if not a.startswith("-")), "")


def network_needs(command: str, defaults: NetworkDefaults | None = None) -> NetworkNeed | None:
    """The hosts `command` would reach, or None when nothing in it needs the network."""
    defaults = defaults or NetworkDefaults()
    try:
        segments = _segments(command)
    except ValueError:
        return None  # unbalanced quotes: the guardian judges the line as it is
    need = NetworkNeed()
    for seg in segments:
        env: dict[str, str] = {}
        argv = _unwrap(seg, env)
        if argv:
            _one(argv, env, defaults, need)
    if not need.programs or not (need.hosts or need.unknown or need.unproxied):
        return None
    need.hosts = sorted(set(need.hosts))
    return need


def _one(argv: list[str], env: dict[str, str], defaults: NetworkDefaults, need: NetworkNeed) -> None:
    prog, args = _program(argv)
    if prog in _DOWNLOADERS:
        urls = _download_urls(prog, args)
        if not urls:
            return
        need.programs.append(prog)
        for u in urls:
            _add_url(u if _URL.match(u) else f"http://{u}", need)
        return
    verbs = _VERBS.get(prog)
    if verbs is None:
        return
    verb = _verb(args)
    if "*" not in verbs and verb not in verbs:
        return
    if prog == "go" and verb == "mod" and _verb(args[args.index("mod") + 1:]) not in ("download", "tidy"):
        return
    if prog == "uv" and verb == "pip":
        prog, args = "pip", args[args.index("pip") + 1:]
    need.programs.append(prog)
    if prog == "git":
        _git(args, need)
        return
    named = _named_urls(prog, args)
    for u in named:
        _add_url(u, need)
    for u in (a for a in args if _URL.match(a)):
        _add_url(u.split(" @ ", 1)[-1], need)
    if prog in ("pip", "uv", "poetry", "pipx"):
        if "--no-index" in args or any(a.startswith(("-i", "--index-url")) for a in args):
            return
        index = env.get("PIP_INDEX_URL") or defaults.pip_index_url
        if index:
            _add_url(index, need)
        else:
            need.hosts.extend(PYPI)
    elif prog in ("npm", "pnpm", "npx", "yarn"):
        if any(a.startswith("--registry") for a in args):
            return
        registry = env.get("npm_config_registry") or env.get("NPM_CONFIG_REGISTRY") or defaults.npm_registry
        if registry:
            _add_url(registry, need)
        else:
            need.hosts.extend(_DEFAULTS.get(prog, NPM))
    elif prog == "go" and env.get("GOPROXY"):
        for u in re.split(r"[,|]", env["GOPROXY"]):
            if _URL.match(u):
                _add_url(u, need)
    else:
        need.hosts.extend(_DEFAULTS.get(prog, ()))


_VALUED = {"curl": "odHXuAeTrwmxKEFbcyzCQ", "wget": "oOPaeUtTlARDiwQ"}
_BARE_HOST = re.compile(r"^[\w-]+(?:\.[\w-]+)*\.[a-z]{2,}(?::[0-9]+)?(?:/\S*)?$", re.I)


def _download_urls(prog: str, args: list[str]) -> list[str]:
    """The URLs a downloader is given: with a scheme, or a bare `host.tld/path` (curl and wget add http)."""
    out, skip = [], False
    valued = _VALUED.get(prog, "")
    for a in args:
        if skip:
            skip = False
            continue
        if a.startswith("--"):
            skip = "=" not in a and a not in ("--silent", "--location", "--fail", "--insecure", "--compressed",
                                               "--quiet", "--show-error", "--verbose", "--head", "--remote-name")
            continue
        if a.startswith("-") and len(a) > 1:
            skip = a[-1] in valued
            continue
        if _URL.match(a) or "$" in a or _BARE_HOST.match(a):
            out.append(a)
    return out


def _named_urls(prog: str, args: list[str]) -> list[str]:
    opts = _URL_OPTS.get(prog, ())
    out = []
    for i, a in enumerate(args):
        name, eq, value = a.partition("=")
        if name in opts:
            value = value if eq else (args[i + 1] if i + 1 < len(args) else "")
            if _URL.match(value) or "$" in value:
                out.append(value)
        elif len(a) > 2 and a[:2] in opts and a[:2] in ("-i", "-f") and _URL.match(a[2:]):
            out.append(a[2:])
    return out


def _add_url(url: str, need: NetworkNeed) -> None:
    if "$" in url or "`" in url:
        need.unknown = True
        return
    host = host_of(url)
    if host is not None:
        need.hosts.append(host)
    elif _URL.match(url) and not url.lower().startswith("file:"):
        need.unproxied.append(url)


def _git(args: list[str], need: NetworkNeed) -> None:
    remotes = [a for a in args if _URL.match(a) or _SCP.match(a)]
    for r in remotes:
        if _SCP.match(r) and not _URL.match(r):
            need.unproxied.append(r)
        else:
            _add_url(r, need)
    if not remotes:
        need.unknown = True  # fetch/pull of a configured remote: its URL is not in the line
