"""The model of secrets: which commands print one (sources) and which send data to another host (sinks).

Parts:
    is_source: why an invocation prints a secret: an environment dump (`env`,
        `printenv`, `export -p`, `declare -x`), a token command
        (`secrets_table.TOKEN_COMMANDS`: `gh auth token`, `aws configure
        export-credentials`, `git credential fill`, `security find-*`...), a
        credential file or store it reads (the CRED path rules and
        `STORE_PATHS`), a folder of them archived or copied whole (`tar c ~/.ssh`),
        a dotenv file outside the workspace, interpreter code reading the whole
        environment.
    token_origin: the token command and the hosts its token is meant for.
    sink_of: how an invocation sends data out (HTTP data options and URLs,
        sockets, copies to `host:`, ssh, DNS names, mail, `git push URL`);
        local destinations are not sinks.
    owned: every secret is a token sent only to its own service.
    code_secret / code_flow: the same for interpreter code (called by
        `guardian.interp_code`).

`guardian.secrets_flow` follows secrets from sources to sinks; the data is
`guardian.secrets_table`.
"""

from __future__ import annotations

import functools
import re

from tether.common.record import dataclass
from tether.guardian import secrets_table as T
from tether.guardian.lazy_re import Lazy as _Lazy
from tether.guardian.paths import SCRATCH, normalise, under
from tether.guardian.rules import Inv
from tether.guardian.rules_paths import path_hits
from tether.guardian.words import UNKNOWN

TYPE_CHECKING = False  # not typing's: the per-call hook imports this module, and typing costs it ~2.5 ms
if TYPE_CHECKING:
    from tether.guardian.analyse import Analyser

_STORE = re.compile(T.STORE_PATHS)
DIRS = re.compile(T.SECRET_DIRS)
_DOTENV, _TEMPLATE = re.compile(T.DOTENV), re.compile(T.TEMPLATES)
_ENV_CODE = _Lazy(T.ENV_CODE)
_LOCAL = re.compile(T.LOCAL_HOST)
META, META_SECRET = _Lazy(T.METADATA), _Lazy(T.METADATA_SECRET)
_HOST = re.compile(r"^(?:[a-z][\w+.-]*://)?(?:[^@/\s]*@)?\[?([\w.-]+|[0-9a-f:]+)\]?")
_ARCHIVERS = frozenset({"tar", "bsdtar", "gtar", "zip", "7z", "7za", "cpio", "rsync", "scp", "cp", "pax",
                        "rclone", "find", "du", "grep", "rg"})
_COPIERS = frozenset({"rsync", "scp", "rclone", "cp"})
WHOLE_HOME = re.compile(r"^(?:/home/[^/]+|/root|/Users/[^/]+|/home|)/?$")
_TOKEN_STOP = frozenset({"ls", "list", "insert", "generate", "edit", "rm", "init", "git", "mv", "cp", "grep",
                         "find", "help", "--help", "--version", "otp"})


Origin = tuple[str, str]
"""(what the secret is, the hosts it is meant for: "" when none)."""
Origins = set[Origin]


_KEY_USERS = frozenset({"ssh", "scp", "sftp", "rsync", "ssh-copy-id", "autossh", "mosh", "sshfs"})
"""`-i KEY` authenticates with a key: it is not read out."""


def read_words(inv: Inv) -> list[str]:
    """Arguments that may name a file read, with `@`, `<`, `name=@` and `--opt=` stripped."""
    out = []
    args = inv.args
    for i, a in enumerate(args):
        if inv.prog in _KEY_USERS and i and args[i - 1] in ("-i", "-F", "-o", "-S", "-e"):
            continue
        if a.startswith("--") and "=" in a:
            a = a.split("=", 1)[1]
        elif a.startswith("-"):
            continue
        a = re.sub(r"^[\w.:-]*=?[@<]", "", a) if ("@" in a or "<" in a) else a
        out.append(a)
    return out


def token_origin(inv: Inv) -> tuple[str, str, bool] | None:
    """(label, owner hosts, whether reading it alone asks) when `inv` prints a token, password or
    key (TOKEN_COMMANDS: `sub` asks, `store` is a secret manager read, a source only)."""
    spec = T.TOKEN_COMMANDS.get(inv.prog)
    if spec is None:
        return None
    pos = [p for p in inv.positional if UNKNOWN not in p]
    for key in ("sub", "store"):
        for sub in spec.get(key, "").split("|"):
            if sub == "*":
                if pos and pos[0] not in _TOKEN_STOP and not inv.has("--help"):
                    return f"{inv.prog} {pos[0]}", spec["owner"], key == "sub"
                continue
            if _sub_matches(sub.split(), pos, inv.args):
                return f"{inv.prog} {sub}", spec["owner"], key == "sub"
    return None


_SECRET_WORD = re.compile(T.SECRET_WORD)


def _sub_matches(words: list[str], pos: list[str], args: list[str]) -> bool:
    """Whether an invocation's operands and options match a TOKEN_COMMANDS subcommand (its words: `get` a
    positional, `secret/*` one by prefix, `~` one whose name says secret, `$` no more positionals, `-o` an option
    given, `!-q` an option absent)."""
    plain = [w for w in words if not w.startswith(("-", "!"))]
    if not words or len([w for w in plain if w != "$"]) > len(pos):
        return False
    for i, w in enumerate(plain):
        if w == "$":
            if len(pos) != i:
                return False
        elif w == "~":
            if not _SECRET_WORD.search(pos[i]):
                return False
        elif w.endswith("*") and len(w) > 1:
            if not pos[i].startswith(w[:-1]):
                return False
        elif pos[i] != w:
            return False

    def given(d: str) -> bool:
        return any(a == d or a.startswith(d + "=") or len(d) == 2 and a.startswith(d) for a in args)

    return all(not given(w[1:]) if w.startswith("!") else given(w) for w in words if w.startswith(("-", "!")))


def _env_dump(inv: Inv) -> bool:
    how = T.ENV_DUMPS.get(inv.prog)
    if how is None or inv.via:
        return False
    if how == "code":
        return any(_ENV_CODE.search(a) for a in inv.args if not a.startswith("-"))
    if how == "bare":
        if inv.prog == "env":
            return not [a for a in inv.args if a not in ("-0", "--null")]
        return not inv.args if inv.prog == "set" else not inv.positional  # `set -e` sets options
    if how.startswith("print:"):  # `history`, `history 50`: unless an option that edits the list
        return not any(a.startswith("-") and set(a[1:]) & set(how[6:]) for a in inv.args)
    if how.startswith("with:"):  # `fc -l`, `fc -ln 1`
        return any(a.startswith("-") and set(a[1:]) & set(how[5:]) for a in inv.args)
    letters = how[5:]
    return not inv.positional and (not inv.args or all(a.startswith("-") and set(a[1:]) <= set(letters)
                                                      for a in inv.args))


_SPECIAL = frozenset({"ps"}) | frozenset(T.REMOTE_EXEC)
_HINT = _Lazy(r"/dev/|\.(?:ssh|gnupg|aws|azure|kube|docker|netrc|git-cred|npmrc|pypirc|vault|terraform|pgpass|my\.cnf|"
              r"config|mozilla|local|password|cargo|gem|s3cfg|boto|oci|gradle|m2|yarnrc|cf|env)|\w\.env|/proc/|"
              r"shadow|sudoers|passwd|ssh_host|Library/|secrets|/etc/ssl|kubernetes|rancher|kubelet|wireguard|"
              r"NetworkManager|\.age/|\.vault-token|_history|databricks|\.dbt/|\.mc/|NuGet")
"""Every credential path holds one of these: words without any are not read further."""


@functools.lru_cache(maxsize=1024)
def language(prog: str) -> str:
    """The interpreter language of a program name (`guardian.interp_code.language`), cached."""
    return _language(prog)


def _language(prog: str) -> str:
    from tether.guardian.interp_code import language

    return language(prog)


_BLOCK = re.compile(T.BLOCK_DEVICE)
_PROC_SECRET = re.compile(T.PROC_SECRET)


def _remote_command(inv: Inv) -> list[str] | None:
    """The command `kubectl exec P -- CMD`, `docker exec C CMD`, `ssh HOST CMD` runs elsewhere."""
    how = T.REMOTE_EXEC.get(inv.prog)
    if how is None:
        return None
    args, pos = inv.args, inv.positional
    if how == "--":
        return args[args.index("--") + 1:] if pos[:1] == ["exec"] and "--" in args else None
    if how == "exec":
        return pos[2:] if pos[:1] == ["exec"] and len(pos) > 2 else None
    return pos[1:] if len(pos) > 1 else None


@functools.lru_cache(maxsize=2048)
def secret_path(path: str) -> bool:
    """A credential file or store (CRED-001..004, CRED-006)."""
    return _STORE.search(path) is not None or any(r.category == "credential-access"
                                                  for r in path_hits(path, "read"))


def is_source(an: Analyser, inv: Inv) -> str:
    """Why `inv` prints a secret ("" when it does not)."""
    if _env_dump(inv):
        return "the environment"
    tok = token_origin(inv)
    if tok is not None:
        return tok[0]
    if inv.prog in T.QUIET or inv.prog in ("echo", "printf"):
        return ""
    s = inv.simple
    named = _named_file(inv)
    if inv.prog not in _ARCHIVERS and inv.prog not in _SPECIAL and not s.stdin and not s.redirects and \
            not _HINT.search("\0".join(inv.args)) and not language(inv.prog) and not named:
        return ""  # no word names a credential place or a device: the common case, kept cheap
    if inv.prog == "ps" and any(not a.startswith("-") and "e" in a and a.isalpha() for a in inv.args):
        return "process environments (ps e)"
    inner = _remote_command(inv)
    if inner is not None:
        why = is_source(an, Inv(inner, s))
        return f"{inv.prog}: {why}" if why else ""
    if inv.prog not in T.DEVICE_INFO and any(_BLOCK.match(a[3:] if a.startswith("if=") else a)
                                            for a in inv.args if a.startswith(("/dev/", "if=/dev/"))):
        return "a raw block device"
    if any(UNKNOWN in a and _PROC_SECRET.match(a) for a in inv.args + [r.target for r in s.redirects]):
        return "another process's environment"
    if language(inv.prog) and inv.prog not in ("awk", "gawk", "mawk", "nawk"):
        what = code_secret(" ".join(inv.args) + "\n" + (s.stdin or ""))
        if what:
            return f"{inv.prog} code reading {what}"
    if inv.prog not in _ARCHIVERS and not _HINT.search("\0".join(inv.args)) and not any(
            r.op == "<" for r in s.redirects):
        return named  # no word names a credential place: the common case, kept cheap
    cwd = s.cwd
    if inv.prog in ("tar", "bsdtar", "gtar"):
        cwd = next((normalise(inv.args[i + 1], cwd, an.home) for i, a in enumerate(inv.args[:-1])
                    if a in ("-C", "--directory") and UNKNOWN not in inv.args[i + 1]), cwd)
    for a in read_words(inv) + [r.target for r in s.redirects if r.op == "<"]:
        if UNKNOWN in a or not a or a == "-" or inv.prog not in _ARCHIVERS and "/" not in a and \
                not a.startswith((".", "~")):
            continue
        p = normalise(a, cwd, an.home)
        if secret_path(p) or inv.prog in _ARCHIVERS and DIRS.search(p) and p != an.ws and not (
                inv.prog in _COPIERS and WHOLE_HOME.match(p)):
            return p  # a home copied whole to a host is EXFIL-003's question, archived it is a source
        if dotenv_outside(an, p) or dotenv_named(p):
            return p  # a workspace `.env` is ordinary to read, a source when it is sent
    return named


_NAMED = re.compile(T.SECRET_NAMED)
_NOT_READ = frozenset({"echo", "printf", "touch", "rm", "mkdir", "ls", "stat", "test", "[", "chmod", "chown", "mv",
                       "cp", "ln", "git", "file", "wc", "du", "sops", "age", "gpg", "openssl", "ssh", "scp", "sftp",
                       "rsync", "ssh-add", "ssh-keygen", "gcloud", "kubectl", "docker", "vault"})
"""Programs that name a file without printing its content (or that are sinks, weighed by `_sink_files`)."""


def _named_file(inv: Inv) -> str:
    """A file by its name a secret (`secrets.json`, `service-account.json`, `server.key`) that `inv` prints:
    "named PATH" (sent on, it asks: EXFIL-007, as `curl -d @secrets.json` does), or ""."""
    if inv.prog in _NOT_READ or inv.prog in T.NET_SINKS:
        return ""
    words = read_words(inv) + [r.target for r in inv.simple.redirects if r.op == "<"]
    for a in words:
        if a and UNKNOWN not in a and _NAMED.search(a.rsplit("/", 1)[-1]):
            return "named " + normalise(a, inv.simple.cwd, "/")
    return ""


def dotenv_named(path: str) -> bool:
    """A dotenv file by its name (`.env`, `.env.production`, `prod.env`), not a template."""
    name = path.rsplit("/", 1)[-1]
    return bool(_DOTENV.search(name)) and not _TEMPLATE.search(name.split(".env", 1)[-1] or "x.")


def dotenv_outside(an: Analyser, path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return bool(_DOTENV.search(name)) and not _TEMPLATE.search(name.split(".env", 1)[-1] or "x.") and \
        not under(path, an.ws) and not any(under(path, d) for d in SCRATCH)


@dataclass(slots=True)
class Sink:
    kind: str
    data: list[str]
    """Words that travel: data options, URLs, queried names, copied sources."""
    stdin: bool
    files: list[str]
    hosts: list[str]
    keeps_token: bool = False
    """A CI secret setter for the current repository (`echo "$NPM_TOKEN" | gh secret set NPM_TOKEN`): a lone
    secret-named variable is stored where it is used, not sent away; anything else it is sent is a leak."""


def sink_of(inv: Inv) -> Sink | None:
    """How `inv` sends data to another host, or None (local destinations are not sinks)."""
    if inv.prog in T.MESSAGES:
        msg = _message_sink(inv)
        if msg is not None or inv.prog not in T.NET_SINKS:
            return msg
    kind = T.NET_SINKS.get(inv.prog)
    if kind is None:
        return _code_sink(inv)
    args, pos = inv.args, inv.positional
    data: list[str] = []
    files: list[str] = []
    stdin = kind in ("socket", "shell", "mail") or bool({"xargs", "parallel"} & set(inv.via))
    dests: list[str] = []
    if kind == "http":
        for i, a in enumerate(args):
            opt, eq, val = a.partition("=")
            if eq and opt in T.HTTP_DATA:
                a, nxt = opt, val
            else:
                nxt = args[i + 1] if i + 1 < len(args) else ""
            if a in T.HTTP_DATA:
                data.append(nxt)
                if T.HTTP_DATA[a] == "file" or "@" in nxt[:40] or nxt.startswith("<"):
                    f = re.sub(r"^[^@<]*[@<]", "", nxt) if T.HTTP_DATA[a] == "value" else nxt
                    (files.append(f) if f not in ("-", "/dev/stdin", ".") else None)
                    stdin = stdin or f in ("-", "/dev/stdin", ".")
            elif len(a) > 2 and a[:2] in ("-d", "-F", "-T", "-H") and not a.startswith("--"):
                data.append(a[2:])
        dests = [p for p in pos if "://" in p or re.match(r"^[\w-]+(?:\.[\w-]+)+(?:[:/]|$)|^\[?[0-9a-f:]+\]", p)]
        if inv.prog in ("http", "https", "xh", "xhs", "httpie", "curlie"):
            stdin = stdin or "--ignore-stdin" not in args
            data += pos[1:]
            files += [re.sub(r"^[^@]*@", "", p) for p in pos[1:] if "@" in p]
        data += dests
    elif kind == "socket":
        if inv.prog == "openssl":
            if not pos or pos[0] != "s_client":
                return None
            dests = [args[i + 1] for i, a in enumerate(args[:-1]) if a == "-connect"] or [UNKNOWN]
        elif inv.prog == "socat":
            dests = [a for a in pos if re.match(r"(?i)^(?:tcp|udp|ssl|openssl|sctp|dccp)[46]?(?:-connect)?:", a)]
            files = [a.split(":", 1)[1] for a in pos if re.match(r"(?i)^(?:open|file|gopen):", a)]
        else:
            if inv.has("l", "--listen"):
                return None
            dests = pos[:1]
        data = pos
    elif kind in ("copy", "shell", "git"):
        valued = _COPY_VALUED.get(inv.prog, frozenset())
        pos = [a for i, a in enumerate(args) if not a.startswith("-") and not (i and args[i - 1] in valued)]
        remote = [p for p in pos if re.match(r"^(?:[\w.-]+@)?[\w.-]+:(?!//)|^\w+://", p)]
        if kind == "copy":
            if not remote and inv.prog not in ("ftp", "lftp", "tftp", "smbclient"):
                return None
            dests = remote or pos[:1]
            files = [p for p in pos if p not in remote]
            if inv.prog == "lftp":
                files += _lftp_puts(_opt_values(args, ["-e", "-c"]))
        elif kind == "shell":
            dests = pos[:1]
            data = pos[1:]
        else:
            if pos[:1] not in (["push"], ["remote"]) or not remote:
                return None
            dests, data = remote, remote
    elif kind == "cloud":
        files = _cloud_upload(inv.prog, args, pos)
        if files is None:
            return None
        stdin, dests = "-" in files, [UNKNOWN]
    elif kind == "dns":
        data = [p for p in pos if not p.startswith("@")]
        dests = data
    else:
        data, dests = pos, pos or [UNKNOWN]
        files = [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-A", "-a", "--attach", "--attach-file")]
    hosts = [m.group(1).lower() if (m := _HOST.match(d)) and UNKNOWN not in d else "" for d in dests]
    if dests and kind != "dns" and all(_LOCAL.match(d) for d in dests):
        return None
    return Sink(kind, data, stdin, files, hosts or [""])


_COPY_VALUED = {
    "scp": frozenset({"-i", "-F", "-o", "-P", "-l", "-S", "-J", "-c"}),
    "sftp": frozenset({"-i", "-F", "-o", "-P", "-l", "-S", "-J", "-c", "-b", "-B", "-R", "-s"}),
    "lftp": frozenset({"-e", "-c", "-u", "-p", "-f", "--user", "--password"}),
    "rsync": frozenset({"-e", "--rsh", "-f", "--filter", "--exclude", "--include", "-T", "--temp-dir",
                        "--exclude-from", "--include-from", "--files-from", "--log-file", "--chmod", "-B", "--port"}),
    "ssh": frozenset({"-i", "-F", "-o", "-p", "-l", "-S", "-J", "-c", "-b", "-E", "-L", "-R", "-D", "-W", "-m",
                      "-O", "-Q", "-w", "-B", "-e", "-I"}),
}
"""Options of the copy tools and ssh that take a value (the value is neither a source nor a host)."""


_ADDR = re.compile(r"^[\w.-]+:\d+$|^\[[0-9a-f:]+\]:\d+$")


def _message_sink(inv: Inv) -> Sink | None:
    """A tool that sends a message or a value to a service (`secrets_table.MESSAGES`): its message words, files
    and stdin, or None (another subcommand, or a server on this machine)."""
    args = inv.args
    for subs, how in T.MESSAGES[inv.prog].items():
        spec = dict(part.split(":", 1) if ":" in part else (part, "") for part in how.split())
        valued = set(",".join((spec.get("host", ""), spec.get("skip", ""), spec.get("opt", ""),
                               spec.get("file", ""), spec.get("field", ""))).split(","))
        pos = [a for i, a in enumerate(args)
               if (not a.startswith("-") or a == "-") and not (i and args[i - 1] in valued)]
        for sub in subs.split("|"):
            words = sub.split()
            at = next((i for i in range(len(pos)) if pos[i:i + len(words)] == words), -1) if words else 0
            if at < 0 or at > 2:
                continue
            data: list[str] = []
            files: list[str] = []
            for v in _opt_values(args, spec.get("opt", "").split(",")):
                (files if v.startswith(("file://", "fileb://")) else data).append(v.split("://", 1)[-1]
                                                                                  if "://" in v[:8] else v)
            files += _opt_values(args, spec.get("file", "").split(","))
            for v in _opt_values(args, spec.get("field", "").split(",")):
                val = v.split("=", 1)[-1]
                (files.append(val[1:]) if val.startswith("@") else data.append(val))
            if "pos" in spec:
                data += pos[at + len(words) + int(spec["pos"]):]
            stdin = "-" in files or "/dev/stdin" in files or "@" in data or "stdin" in spec and (
                not data and not files or any(a in spec["stdin"].split(",") for a in args if spec["stdin"]))
            files = [f for f in files if f not in ("-", "/dev/stdin")]
            hosts = [""]
            if "host" in spec:
                names = spec["host"].split(",")
                given = _opt_values(args, [n for n in names if n.startswith("-")])
                if "url" in names:
                    given += [p for p in pos if "://" in p]
                if "addr" in names:
                    given += [p for p in pos if UNKNOWN not in p and _ADDR.match(p)][:1]
                if not given or all(UNKNOWN not in h and (_LOCAL.match(h) or h.startswith("/")) for h in given):
                    return None  # the default is this machine's server
                hosts = [m.group(1).lower() if (m := _HOST.match(h)) and UNKNOWN not in h else "" for h in given]
            keeps = "setter" in spec and not _opt_values(args, ["-R", "--repo", "-o", "--org", "-g", "--group"])
            return Sink("message", data, stdin, files, hosts, keeps)
    return None


_LFTP_PUT = re.compile(r"(?:^|[;&|]\s*)(?:put|mput|reput|mirror\s+(?:-\w+\s+)*(?:-R|--reverse))((?:\s+[^\s;&|]+)+)")


def _lftp_puts(scripts: list[str]) -> list[str]:
    """The local files an lftp script (`-e 'put F; bye'`, `-c 'mirror -R DIR'`) uploads."""
    out = []
    for script in scripts:
        for m in _LFTP_PUT.finditer(script):
            out += [w for w in m.group(1).split() if not w.startswith("-")]
    return out


def _cloud_upload(prog: str, args: list[str], pos: list[str]) -> list[str] | None:
    """The local files an upload tool sends (`secrets_table.UPLOADS`: `aws s3 sync DIR s3://b`,
    `az storage blob upload -f F`, `restic backup DIR`, `docker push TAG`...), or None."""
    for subs, how in T.UPLOADS.get(prog, {}).items():
        for sub in subs.split("|"):
            words = sub.split()
            at = next((i for i in range(len(pos)) if pos[i:i + len(words)] == words), -1)
            if at < 0 or at > 2:
                continue
            rest = pos[at + len(words):]
            kind, _, spec = how.partition(":")
            if kind == "to":
                remote = tuple(spec.split()) or ("",)
                first = next((i for i, p in enumerate(rest) if _remote_url(p, remote)), -1)
                return rest[:first] if first > 0 else None  # the local words before the destination
            if kind == "opt":
                return _opt_values(args, spec.split())
            if kind == "all":
                return rest or ["-"]
            if kind == "after":
                return rest[int(spec):]
            if kind == "backup":
                repo = _opt_values(args, spec.split())
                local = repo and all(UNKNOWN not in r and not re.match(r"^[\w+-]+:", r) for r in repo)
                return None if local else [p for p in rest if p not in repo]
            if kind == "borg":
                repo = next((p for p in rest if "::" in p or p.startswith("ssh://")), "")
                if not re.match(r"^(?:ssh://|[\w.-]+@|[\w.-]+:(?!:))", repo):
                    return None
                return [p for p in rest if p != repo]
            if kind == "image":
                return ["image:" + p for p in rest[:1]]
    return None


def _remote_url(word: str, prefixes: tuple[str, ...]) -> bool:
    """`s3://b/k`, `gs://b`; with an empty prefix any `alias/bucket` or URL that is not a local path."""
    if prefixes == ("",):
        return "/" in word and not word.startswith(("/", ".", "~")) and UNKNOWN not in word
    return word.startswith(prefixes)


def _opt_values(args: list[str], opts: list[str]) -> list[str]:
    """The values of `opts` (`-f F`, `--file=F`, `-fF` for one letter)."""
    out = []
    for i, a in enumerate(args):
        for o in opts:
            if a == o and i + 1 < len(args):
                out.append(args[i + 1])
            elif o.startswith("--") and a.startswith(o + "="):
                out.append(a[len(o) + 1:])
    return out


def _code_sink(inv: Inv) -> Sink | None:
    """An interpreter whose code (option, heredoc or here-string) talks to the network: what it
    reads on stdin or in its arguments can leave (`| python3 -c 'requests.post(.., sys.stdin.read())'`)."""
    if not language(inv.prog) or inv.prog.endswith("awk"):
        return None
    from tether.guardian.interp_code import _SOCKET, _UPLOAD

    code = " ".join(inv.args) + "\n" + (inv.simple.stdin or "")
    if not (_CODE_SENDS.search(code) or _UPLOAD.search(code) or _SOCKET.search(code)) or all_local(code):
        return None
    return Sink("code", [a for a in inv.args if UNKNOWN in a], True, [], [""])


def owned(origins: set[tuple[str, str]], sink: Sink) -> bool:
    """Every secret is a token sent only to the service it is for (`gh auth token` to github.com)."""
    for _label, owner in origins:
        if not owner or not all(h and any(h == o or h.endswith("." + o) for o in owner.split())
                                for h in sink.hosts):
            return False
    return True


_CODE_SENDS, _CODE_ENV, _CODE_SECRETS = _Lazy(T.CODE_SENDS), _Lazy(T.CODE_ENV), _Lazy(T.CODE_SECRETS)
_CODE_ESCAPE = _Lazy(T.CODE_ESCAPE)
_CODE_NAMED_ENV = _Lazy(T.CODE_NAMED_ENV, 2)  # re.IGNORECASE: process.env.github_token


def code_secret(code: str) -> str:
    """What secret interpreter code reads ("" for none): the whole environment or a credential file."""
    m = _CODE_ENV.search(code) or _CODE_SECRETS.search(code)
    return ("the environment" if "env" in m.group(0).lower() else m.group(0)) if m else ""


def code_flow(code: str, lang: str, sends: bool = False) -> list[tuple[str, str]]:
    """(rule id, detail) for code that sends a secret or reads a metadata endpoint; `sends`: the
    caller's own upload and socket patterns matched (`interp_code`)."""
    out = []
    if ("docker" in code or "ontainer" in code) and _CODE_ESCAPE.search(code):
        out.append(("CTR-001", f"{lang}: a container SDK starts a container with the host's privileges or root"))
    meta = META.search(code)
    if meta:
        tail = code[meta.start(): meta.start() + 200]
        out.append(("CRED-008" if META_SECRET.search(tail) else "CRED-009", f"{lang}: {meta.group(0).strip()}"))
    secret = code_secret(code) if ("env" in code or "ENV" in code or "/" in code) else ""
    if secret and (sends or _CODE_SENDS.search(code)) and not all_local(code):
        out.append(("EXFIL-006", f"{lang} code sends {secret} over the network"))
    elif not secret and (sends or _CODE_SENDS.search(code)) and not all_local(code) and (
            named := _CODE_NAMED_ENV.search(code)):
        # one secret-named variable into a network call: sent, or used to authenticate (a token in a header is
        # ordinary); the guardian cannot tell which from the code, so it asks
        out.append(("EXFIL-007", f"{lang} code reads ${named.group(1)} and makes a network call"))
    elif secret and secret != "the environment" or _CODE_STORES.search(code):
        out.append(("CRED-006", f"{lang} code reads a credential store"))
    return out


_CODE_STORES = _Lazy(r"keyring\.get_(?:password|credential)|SecKeychain|win32cred|CredRead|secretstorage|"
                     r"Login Data|logins\.json|key4\.db|cookies\.sqlite|Cookies\b[\"']|\.password-store")
_URL = _Lazy(r"[a-z][\w+.-]*://[^\s\"'`]+")


def all_local(code: str) -> bool:
    urls = _URL.findall(code)
    return bool(urls) and all(_LOCAL.match(u) for u in urls)

