"""Which arguments of a command name files it opens, and which are only data.

Parts:
    path_operands: Inv -> the arguments that may be paths the program reads.
        Text a program only prints or matches against (echo/printf arguments,
        a grep/rg/ag pattern, a sed script, an awk or jq program, a `test`
        operand) is data: `grep -rn '/etc/shadow' tests/` searches for the
        text, it does not open /etc/shadow.

The data arguments are still analysed as payloads where a program runs them
(`awk 'BEGIN{system(..)}'`, `sed e`); this module only keeps them out of the
read-path rules (CRED-*, SHELL-001).
"""

from __future__ import annotations

from guardian.rules import Inv

_PRINTERS = frozenset({"echo", "printf", "test", "[", "[[", "logger", "banner", "figlet", "((", ":"})
_GREPS = frozenset({"grep", "egrep", "fgrep", "zgrep", "rg", "ag", "ack", "ack-grep", "pcregrep",
                    "ugrep", "git-grep"})
_GREP_VALUED = frozenset({"-A", "-B", "-C", "-m", "-d", "-D", "--max-count", "--context",
                          "--after-context", "--before-context", "--label", "-g", "--glob",
                          "-t", "--type", "-T", "--type-not", "-M", "--max-columns", "-j",
                          "--threads", "--color", "--colour", "-E", "--encoding"})
_SCRIPTED = {"sed": ("-e", "--expression"), "awk": ("-e",), "gawk": ("-e", "--source"),
             "mawk": (), "nawk": (), "jq": (), "yq": (), "gojq": ()}


def _after_pattern(inv: Inv, pattern_opts: tuple[str, ...], valued: frozenset[str]) -> list[str]:
    """Arguments other than the pattern/script: the explicit `-e X` values, or the first operand."""
    args, out, explicit, i = inv.args, [], False, 0
    operands: list[str] = []
    while i < len(args):
        a = args[i]
        if a == "--":
            operands += args[i + 1 :]
            break
        if a in pattern_opts:
            explicit, i = True, i + 2
            continue
        if any(a.startswith(o + "=") for o in pattern_opts if o.startswith("--")) or (
                any(a.startswith(o) and len(a) > len(o) for o in pattern_opts if not o.startswith("--"))):
            explicit = True
        elif a in valued:
            i += 2
            continue
        elif a.startswith("-") and a != "-":
            out.append(a)
        else:
            operands.append(a)
        i += 1
    return out + (operands if explicit else operands[1:])


def path_operands(inv: Inv) -> list[str]:
    """The arguments of `inv` that may name files it opens (everything but known data)."""
    prog = inv.prog
    if prog in _PRINTERS:
        return []
    if prog == "git" and inv.positional[:1] == ["grep"]:
        return _after_pattern(Inv(inv.argv[1:], inv.simple), ("-e",), _GREP_VALUED)
    if prog in _GREPS:
        if inv.has("f", "--file"):
            return inv.args
        return _after_pattern(inv, ("-e", "--regexp"), _GREP_VALUED)
    if prog in _SCRIPTED:
        if inv.has("f", "--file", "--from-file"):
            return inv.args
        return _after_pattern(inv, _SCRIPTED[prog], frozenset({"-F", "-v", "--arg", "--argjson"}))
    return inv.args


def find_matches(args: list[str], roots: list[str]) -> list[str]:
    """What `{}` stands for in `find ROOTS EXPR -exec CMD {}`: the roots, or entries below them.

    A root itself is a match unless the expression rules it out: `-mindepth 1`
    or more (`{}` is then `ROOT/*`, every entry: judged like `rm -rf ROOT/*`),
    or a `-name`/`-iname` pattern (not negated, no `-o`) that the root's own
    name cannot match (`{}` is then `ROOT/PATTERN`, a path inside the root).
    """
    import fnmatch
    import posixpath

    expr = []
    for a in args:
        if a in ("-exec", "-execdir", "-ok", "-okdir"):
            break
        expr.append(a)
    if any(a in ("-o", "-or", ",") for a in expr):
        return roots
    names, mindepth = [], 0
    for k, a in enumerate(expr[:-1]):
        negated = k > 0 and expr[k - 1] in ("!", "-not")
        if a in ("-name", "-iname") and not negated and "/" not in expr[k + 1]:
            names.append(expr[k + 1])
        elif a == "-mindepth" and expr[k + 1].isdigit():
            mindepth = int(expr[k + 1])
    out = []
    for root in roots:
        base = posixpath.basename(posixpath.normpath(root)) if root not in ("/", "") else "/"
        own = [n for n in names if not fnmatch.fnmatchcase(base, n)]
        if own:
            out.append(root.rstrip("/") + "/" + own[0])
        elif mindepth >= 1:
            out.append(root.rstrip("/") + "/*" * min(mindepth, 4))
        else:
            out.append(root)
    return out
