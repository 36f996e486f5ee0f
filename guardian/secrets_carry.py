"""Less direct carriers of a secret, for `guardian.secrets_flow`: shell functions, images, config files.

Parts:
    functions: the bodies of the shell functions a line defines (`f() { curl
        -d @- ..; }`), so a call fed a secret (`env | f`) reaches the sinks
        inside, and a call of a function that reads one is a source.
    body_sinks: the sinks in such a body that read what the call is fed.
    built_image: `docker build -t TAG CTX` of a context holding a secret
        written earlier in the line: the image `TAG` carries it (what
        `docker push TAG` then sends, `secrets_table.UPLOADS` "image").
    config_args: the options a network tool reads from a config file
        (`curl -K cfg`, `secrets_table.CONFIG_OPTS`) written in the line, so
        `data=@~/.ssh/id_rsa` in it counts; None when that file cannot be read
        (EXFIL-008, ask).
"""

from __future__ import annotations

import re
import shlex

from tether.guardian import secrets_table as T
from tether.guardian.paths import normalise, under
from tether.guardian.rules import Inv, static_rule
from tether.guardian.secrets_model import Sink, sink_of
from tether.guardian.words import UNKNOWN

TYPE_CHECKING = False  # not typing's: the per-call hook imports this module, and typing costs it ~2.5 ms

if TYPE_CHECKING:
    from tether.guardian.analyse import Analyser
    from tether.guardian.shell import Simple

static_rule("EXFIL-008", "exfiltration", "ask",
            "a network tool reads its options from a config file the guardian cannot read",
            "curl -K ./upload.cfg")


def functions(simples: list[Simple]) -> dict[str, list[Simple]]:
    """Function name -> the simple commands of its body, for the functions defined in the line."""
    out: dict[str, list[Simple]] = {}
    for s in simples:
        if s.in_function:
            out.setdefault(s.in_function, []).append(s)
    return out


def body_sinks(body: list[Simple]) -> list[tuple[Inv, Sink]]:
    """Sinks in a function body that read their stdin (what the call is fed) or the call's arguments."""
    out = []
    for s in body:
        if not s.argv or s.upstream:
            continue  # fed by the body's own pipe, not by the call
        inv = Inv(s.argv, s)
        sink = sink_of(inv)
        if sink is not None and (sink.stdin or any(UNKNOWN in d for d in sink.data + sink.files)):
            out.append((inv, sink))
    return out


def built_image(an: Analyser, files: dict[str, set], s: Simple) -> None:
    """`docker build -t TAG CTX`: the image carries the secrets written under CTX earlier in the line."""
    argv = s.argv
    if not argv or argv[0].rsplit("/", 1)[-1] not in T.BUILDERS or "build" not in argv[1:3] and \
            argv[1:3] not in (["image", "build"], ["buildx", "build"], ["bud"]):
        return
    tags, pos, i = [], [], argv.index("build") + 1 if "build" in argv else 2
    while i < len(argv):
        a = argv[i]
        if a in ("-t", "--tag") and i + 1 < len(argv):
            tags.append(argv[i + 1])
            i += 2
            continue
        if a.startswith("--tag="):
            tags.append(a[6:])
        elif a in ("-f", "--file", "--build-arg", "--target", "--platform", "--label", "--network"):
            i += 1
        elif not a.startswith("-"):
            pos.append(a)
        i += 1
    ctx = pos[-1] if pos else "."
    if UNKNOWN in ctx:
        return
    root = normalise(ctx, s.cwd, an.home)
    got: set = set()
    for p, origins in files.items():
        if not p.startswith("image:") and (p == root or under(p, root)):
            got |= origins
    if got:
        for t in tags:
            files.setdefault("image:" + t, set()).update(got)


def config_args(an: Analyser, inv: Inv) -> list[str] | None:
    """The options `curl -K FILE` reads from FILE ([] when no such option; None when FILE is
    not written in this line or comes from stdin: the guardian cannot see them)."""
    opts = T.CONFIG_OPTS.get(inv.prog, "").split()
    names = []
    args = inv.args
    for i, a in enumerate(args):
        for o in opts:
            if a == o and i + 1 < len(args):
                names.append(args[i + 1])
            elif o.startswith("--") and a.startswith(o + "=") or len(o) == 2 and a.startswith(o) and len(a) > 2 \
                    and not a.startswith("--"):
                names.append(a.split("=", 1)[1] if a.startswith("--") else a[2:])
    out: list[str] = []
    for raw in names:
        if UNKNOWN in raw or raw in ("-", "/dev/stdin"):
            return None
        content = an.files.get(normalise(raw, inv.simple.cwd, an.home))
        if not content:
            return None
        out += _options(content)
    return out


def _options(text: str) -> list[str]:
    """curl config syntax (`url = X`, `data: @F`, `--header X`, `-d X`) as argv words."""
    out = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        m = re.match(r"^(-{0,2}[\w-]+)\s*(?:[=:]\s*|\s+|$)(.*)$", line)
        if not m:
            continue
        key, val = m.group(1), m.group(2).strip()
        if not key.startswith("-"):
            key = ("--" if len(key) > 1 else "-") + key
        try:
            words = shlex.split(val) if val else []
        except ValueError:
            words = [val]
        out += [key, *words[:1]]
    return out
