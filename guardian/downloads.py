"""Downloads in a command line: what is fetched from another host, and when it is run.

Parts:
    on_line: a download run through a substitution (`bash <(curl ..)`,
        `eval "$(wget -O- ..)"`, `source /dev/stdin <<< "$(curl ..)"`).
    mark_downloads: the files an invocation fetches (curl -sLo, wget -P,
        tftp get, scp/rsync from a host, nc/ssh/openssl redirected, tee/dd fed
        by a download): marked in the analyser's file map with unknown content.
    runs_download: an interpreter running such a file, or reading a download
        through filters (`curl | gunzip | sh`, `curl | tee f | bash`).

Executing a downloaded file anywhere later in the line is NET-002 (deny);
piping one into an interpreter is NET-001 (deny).
"""

from __future__ import annotations

import re

from tether.guardian.lazy_re import Lazy as _Lazy
from tether.guardian.paths import normalise
from tether.guardian.programs_table import DOWNLOADERS, SHELLS
from tether.guardian.rules import Inv
from tether.guardian.words import UNKNOWN

TYPE_CHECKING = False  # not typing's: the per-call hook imports this module, and typing costs it ~2.5 ms
if TYPE_CHECKING:
    from tether.guardian.analyse import Analyser

_RUNNERS = SHELLS | {
    "iex",
    "Invoke-Expression",
    "source",
    ".",
    "python",
    "python3",
    "python2",
    "perl",
    "ruby",
    "node",
    "php",
    "lua",
    "tclsh",
    "expect",
    "Rscript",
    "pwsh",
    "osascript",
    "java",
    "deno",
    "bun",
    # other shells, macro processors and interpreters that run what they read
    "xonsh", "elvish", "nu", "oksh", "loksh", "ion", "murex", "rc", "es", "sash", "m4", "gm4", "julia", "elixir",
    "guile", "racket", "sbcl", "clisp", "csi", "gawk", "pypy3", "pypy", "jruby", "luajit", "wish", "tcsh", "csh",
    "nodejs", "R", "crystal", "swift", "groovy", "jshell", "scala", "bb", "clojure", "php-cgi",
}
_DL_NAMES = ("curl|wget|fetch|aria2c|lwp-request|lwp-download|http|https|xh|nc|ncat|netcat|tftp|"
             "ftp|GET|socat|openssl|busybox\\s+wget")
_SUBST_RUN = _Lazy(
    r"(?:\b(?:eval|source|exec|(?:ba|z|da|k|fi|c|tc)?sh|python[0-9.]*|perl|ruby|node|php|lua)\b|"
    r"(?:^|[;&|(\s])\.)\s+(?:-\S+\s+)*(?:/dev/stdin\s*|-\s*)?(?:<<<\s*)?[\"']?(?:<\(|\$\(|`)\s*"
    r"(?:sudo\s+)?(?:\S*/)?(?:"
    + _DL_NAMES + r")\b|(?:^|[;&|]\s*)[\"']?\$\(\s*(?:sudo\s+)?(?:\S*/)?(?:" + _DL_NAMES + r")\b")
_PIPED_SUBST = _Lazy(r"<\(\s*(?:sudo\s+)?(?:\S*/)?(?:" + _DL_NAMES + r")\b.*\|\s*(?:sudo\s+(?:-\S+\s+)*)?"
                          r"(?:\S*/)?(?:ba|z|da|k)?sh\b", re.S)
_FILTERS = frozenset({"tee", "cat", "gunzip", "gzip", "zcat", "base64", "xxd", "sed", "tr", "rev",
                      "head", "tail", "bzip2", "bunzip2", "xz", "unxz", "zstd", "openssl", "dd",
                      "sort", "uniq", "grep", "awk", "iconv", "unzip", "bzcat", "xzcat"})


_REMOTE_EVAL = re.compile(
    r"\bsource(?:_url)?\s*\(\s*(?:url\s*\(\s*)?[\"']https?://|"  # R source("https://..."), devtools::source_url
    r"\bfetch\s*\([^;]{0,200}?\.then\s*\(\s*(?:eval|Function|\w+\s*=>\s*(?:eval|new\s+Function|Function)\b)|"
    r"\b(?:eval|Function)\s*\(\s*await\s[^;]{0,80}\bfetch\s*\(|"  # node/deno: fetch(u).then(r=>r.text()).then(eval)
    r"\bexec\s*\(\s*(?:urllib\.request\.)?(?:urlopen|requests\.get|httpx\.get)\s*\(|"  # python exec(urlopen(u)...)
    r"\beval\s*\(?\s*(?:URI\.open|Net::HTTP\.get|file_get_contents|LWP::Simple::get|get)\s*\(\s*[\"']?https?://")
"""Code that fetches code and evaluates it in the same process: curl | sh without the pipe."""


def on_line(an: Analyser, text: str) -> None:
    """A download run through process or command substitution, or fetched and evaluated in-process."""
    if ("<(" in text or "$(" in text or "`" in text) and (
            _SUBST_RUN.search(text) or _PIPED_SUBST.search(text)):
        an._hit("NET-001", "", "downloaded content executed through a substitution")
    if ("http" in text or "fetch" in text) and _REMOTE_EVAL.search(text):
        an._hit("NET-001", "", "code fetched from the network is evaluated in-process")


def mark_downloads(an: Analyser, inv: Inv) -> None:
    """Mark the files this invocation fetches from another host (content unknown)."""
    spec = DOWNLOADERS.get(inv.prog)
    s, args, pos = inv.simple, inv.args, inv.positional
    mark = an.files.__setitem__
    cwd = s.cwd

    def local(p: str) -> None:
        if p and UNKNOWN not in p and p != "-":
            mark(normalise(p, cwd, an.home), None)

    if inv.prog in _UNPACKERS and _unpacks_download(an, inv):
        dest = next((args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-C", "--directory", "-d")), ".")
        if UNKNOWN not in dest:
            mark(normalise(dest, cwd, an.home).rstrip("/") + "/", None)  # a downloaded tree
    if inv.prog in ("tee", "dd") and _fed_by_download(s):
        for p in (pos if inv.prog == "tee" else [a[3:] for a in args if a.startswith("of=")]):
            local(p)
    if inv.prog in ("curl", "wget"):
        _curl_wget(inv, args, local)
        return
    if spec is None:
        return
    for r in s.redirects:
        if r.writes:
            local(r.target)
    for part in spec.split("|"):
        if part.startswith("opt:"):
            opts = part[4:].split(",")
            for i, a in enumerate(args):
                if a in opts and i + 1 < len(args):
                    local(args[i + 1])
                elif a.startswith(tuple(o + "=" for o in opts if o.startswith("--"))):
                    local(a.split("=", 1)[1])
        elif part == "url-name":
            for u in pos:
                if "://" in u:
                    local(u.rstrip("/").rsplit("/", 1)[-1].split("?")[0])
        elif part.startswith("pos:") and len(pos) > int(part[4:]) and any("://" in p for p in pos):
            local(pos[int(part[4:])])
        elif part == "tftp":
            words = " ".join(args) + " " + (an._stdin(s) or "")
            for m in re.finditer(r"\bget\s+(\S+)(?:\s+(?!-)(\S+))?", words):
                local(m.group(2) or m.group(1).rsplit("/", 1)[-1])
            for flag in ("-l", "-r"):
                if flag in args and args.index(flag) + 1 < len(args):
                    local(args[args.index(flag) + 1].rsplit("/", 1)[-1] if flag == "-r" else
                          args[args.index(flag) + 1])
        elif part == "remote-copy" and len(pos) >= 2:
            remote = [p for p in pos[:-1] if re.match(r"^(?:[\w.-]+@)?[\w.-]+:(?!//)|^\w+://", p)]
            dest = pos[-1]
            for r in remote:
                name = r.rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1]
                if dest in (".", "./") or dest.endswith("/"):
                    local(dest.rstrip("/") + "/" + name)
                else:
                    local(dest)


def _curl_wget(inv: Inv, args: list[str], local) -> None:  # type: ignore[no-untyped-def]
    """`curl -sLo f`, `-o/tmp/f`, `wget -qO f`, `wget -P dir URL`: the files they write."""
    letter = "o" if inv.prog == "curl" else "O"
    urls = [p for p in inv.positional if "://" in p or "/" in p]
    for i, a in enumerate(args):
        if a.startswith("-") and not a.startswith("--") and letter in a[1:]:
            k = a.index(letter, 1)
            value = a[k + 1 :] or (args[i + 1] if i + 1 < len(args) else "")
            local(value)
        if inv.prog == "wget" and a in ("-P", "--directory-prefix") and i + 1 < len(args):
            for u in urls:
                local(args[i + 1].rstrip("/") + "/" + u.rstrip("/").rsplit("/", 1)[-1])


def _fed_by_download(s: object, depth: int = 0) -> bool:
    """Whether the stdin of `s` comes (through filters) from a downloader."""
    for u in getattr(s, "upstream", []) or []:
        if not u.argv or depth > 8:
            continue
        name = u.argv[0].rsplit("/", 1)[-1]
        if name in DOWNLOADERS and name not in ("git", "ssh", "busybox") or (
                name == "busybox" and u.argv[1:2] == ["wget"]):
            return True
        if name in _FILTERS and _fed_by_download(u, depth + 1):
            return True
    return False


_URL_RUNNERS = frozenset({"deno", "bun", "bunx", "npx", "pipx", "uvx", "pnpx", "node", "python",
                          "python3", "ruby", "perl", "php", "sh", "bash", "zsh"})


_CODE_OPTS = frozenset({"-m", "-c", "-e", "-E", "-p", "-r", "--eval", "--print", "--command"})
"""Interpreter options after which the words are the code's or the module's arguments, not a script to fetch."""


def _operands(inv: Inv) -> list[str]:
    """The words a runner takes as its script or package: none once `python -m MOD` or `node -e CODE` took the
    program (`python3 -m pip install --index-url http://h/simple x`: the URL is pip's index)."""
    if inv.prog in ("npx", "pipx", "uvx", "pnpx", "bunx", "deno", "bun"):
        return inv.positional
    for a in inv.args:
        if not a.startswith("-") or a == "--":
            break
        if a in _CODE_OPTS or a[:1] == "-" and a[1:2] != "-" and any(c in a[1:] for c in "mc") and \
                inv.prog.startswith(("python", "pypy")):
            return []
    return inv.positional


_UNPACKERS = frozenset({"tar", "bsdtar", "gtar", "unzip", "7z", "7za", "cpio"})


def _unpacks_download(an: Analyser, inv: Inv) -> bool:
    """An archive tool unpacking something fetched in this line (from a pipe or a file)."""
    if _fed_by_download(inv.simple):
        return True
    return any(an.files.get(normalise(a, inv.simple.cwd, an.home), "") is None
               for a in inv.args if UNKNOWN not in a and not a.startswith("-"))


def _in_downloaded_tree(an: Analyser, path: str) -> bool:
    return any(k.endswith("/") and v is None and path.startswith(k) for k, v in an.files.items())


_REMOTE_SPEC = re.compile(r"^(?:github:|gitlab:|bitbucket:|gist:|git\+|git://|(?:https?|ssh|file)://(?!localhost|127\.)|"
                          r"git@[\w.-]+:)", re.I)
"""A package spec that names code at a URL or a repository, not a name in the tool's registry
(`npx github:u/r`, `uvx --from git+https://h/r tool`, `pipx run --spec https://h/x.tgz x`)."""
_SPEC_OPTS = frozenset({"--from", "--spec", "-p", "--package", "--with"})
_RUNNER_SUBS = {"npm": ("exec", "x"), "pnpm": ("dlx", "exec"), "yarn": ("dlx",), "bun": ("x",), "pipx": ("run",)}
"""Package managers whose subcommand fetches a package and runs it (`pnpm dlx`, `bun x`, `pipx run`)."""
_GO_REMOTE = re.compile(r"^[a-z0-9-]+(?:\.[a-z0-9-]+)+/[^@\s]+@[\w.+-]+$", re.I)
"""`go run host.tld/path@version`: a module fetched by its path (a host anywhere) and run."""


def _fetch_and_run(inv: Inv) -> str:
    """The remote spec a package runner fetches and executes, or "" (a registry name stays ordinary)."""
    prog, args = inv.prog, inv.args
    if prog == "ansible-pull":  # clones a playbook repository and runs it on this host
        return next((args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-U", "--url")), "") or \
            next((a.split("=", 1)[1] for a in args if a.startswith("--url=")), "")
    if prog == "go" and inv.positional[:1] == ["run"]:
        return next((a for a in inv.positional[1:2] if _GO_REMOTE.match(a)), "")
    if prog == "uv":  # `uv tool run --from git+..`: uvx spelled out
        if inv.positional[:2] != ["tool", "run"]:
            return ""
        prog, inv = "uvx", Inv([inv.argv[0], *inv.args[inv.args.index("run") + 1:]], inv.simple)
        args = inv.args
    sub = _RUNNER_SUBS.get(prog)
    if sub is not None and not (inv.positional[:1] and inv.positional[0] in sub):
        return ""
    if sub is None and prog not in ("npx", "pnpx", "bunx", "uvx"):
        return ""
    for i, a in enumerate(args):
        head, eq, val = a.partition("=")
        if head in _SPEC_OPTS:
            val = val if eq else (args[i + 1] if i + 1 < len(args) else "")
            if _remote(prog, val.strip("'\"")):
                return val
    pos = inv.positional[1:] if sub else inv.positional
    first = pos[0] if pos else ""
    return first if _remote(prog, first) else ""


_GH_SHORT = re.compile(r"^[\w.-]+/[\w.-]+(?:#\S*)?$")
_NPM_FAMILY = frozenset({"npx", "pnpx", "bunx", "npm", "pnpm", "yarn", "bun"})


def _remote(prog: str, spec: str) -> bool:
    """A spec naming code at a URL or repository; for npm's runners also `user/repo`, its GitHub shorthand
    (a scoped registry name starts with `@`, a local path with `.`)."""
    return bool(_REMOTE_SPEC.match(spec)) or (
        prog in _NPM_FAMILY and bool(_GH_SHORT.match(spec)) and not spec.startswith(("@", "."))
        and not re.search(r"\.[cm]?[jt]sx?$", spec))


def remember_clone(an: Analyser, inv: Inv) -> None:
    """`git clone URL [DIR]`: the tree it creates is a download (running a script from it is download-execute)."""
    pos = inv.positional
    if pos[:1] != ["clone"] or len(pos) < 2 or not re.match(r"^(?:https?|git|ssh)://|^git@", pos[1]) or \
            re.match(r"^https?://(?:localhost|127\.)", pos[1]):
        return
    name = pos[2] if len(pos) > 2 else pos[1].rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1].removesuffix(".git")
    if name and UNKNOWN not in name:
        an.files[normalise(name, inv.simple.cwd, an.home).rstrip("/") + "/"] = None


def runs_download(an: Analyser, inv: Inv) -> None:
    """An interpreter running a downloaded file, a URL, or a download read through filters;
    any program run from a tree unpacked from a download."""
    if "/" in inv.argv[0] and UNKNOWN not in inv.argv[0] and \
            _in_downloaded_tree(an, normalise(inv.argv[0], inv.simple.cwd, an.home)):
        an._hit("NET-002", inv.prog, f"{inv.argv[0]} comes from an unpacked download")
    spec = _fetch_and_run(inv)
    if spec:
        if inv.prog == "go":
            an._hit("PKG-002", inv.prog, f"fetches and runs the module {spec}")
        else:
            an._hit("NET-002", inv.prog, f"fetches and runs {spec}")
    if inv.prog in _URL_RUNNERS:
        url = next((a for a in _operands(inv) if re.match(r"^https?://", a)), None)
        if url is not None and not re.match(r"^https?://(?:localhost|127\.)", url):
            if inv.prog == "deno" and not any(a.startswith(("-A", "--allow-")) for a in inv.args):
                # deno without permissions runs it without file, network, environment or process access
                an._hit("EXEC-002", inv.prog, f"runs code from {url} (deno, no permissions granted)")
            else:
                an._hit("NET-002", inv.prog, f"runs code from {url}")
    if inv.prog not in _RUNNERS and not re.match(r"^(?:python|pypy)[0-9.]*$", inv.prog):
        return
    for a in inv.args:
        if a.startswith("-") or UNKNOWN in a:
            continue
        path = normalise(a, inv.simple.cwd, an.home)
        if an.files.get(path, "") is None or _in_downloaded_tree(an, path):
            an._hit("NET-002", inv.prog, a)
        break
    fed_args = bool({"xargs", "parallel"} & set(inv.via))
    if (_reads_code_on_stdin(inv) or fed_args) and _fed_by_download(inv.simple):
        an._hit("NET-001", inv.prog, "download piped (through filters) into an interpreter")


def _reads_code_on_stdin(inv: Inv) -> bool:
    """Whether the interpreter takes its program from stdin (`sh`, `sh -s -- args`, `python3 -`)."""
    if inv.has("c", "e", "E", "m", "r", "--eval", "--command"):
        return False
    pos = inv.positional
    return not pos or pos[0] in ("-", "/dev/stdin") or (inv.prog in SHELLS and inv.has("s"))
