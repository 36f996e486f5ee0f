"""Code that tells where it runs: the sandbox (the run's and the gate's alike) from the person's machine.

The gate re-runs the checks in fresh sandboxes that differ from the run's own
(another mount, HOME, /tmp), so code that works only where the run worked
fails there. What no re-run can vary is what every sandbox shares and a
person's machine lacks: the hostname `sandbox`, uid 1000, a container's
/.dockerenv and PID 1, a few CPUs, a fresh boot, no `.git`. Code that
branches on such a signal can pass every re-run and fail for the person, so
`sniffs()` names each file the run wrote that reads one in a condition (a
test, a comparison, `case`, `if`), directly or through a variable it set
from one. `SIGNALS` is the table: (what, the pattern that reads it, the goal
words that make reading it the work: "print the hostname").
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from tether.common.manifest import FileState
from tether.common.walk import read_rel
from tether.gate.evidence import is_generated

TEXT_CAP = 131_072
CODE = re.compile(r"\.(py|sh|bash|bats|js|mjs|cjs|ts|rb|pl|pm|t|php|lua|go|rs|mk)$|"
                  r"(^|/)(Makefile|GNUmakefile|makefile)$")
_CMP = r"\s*(?:==?|!=|=~|-eq|-ne|-lt|-le|-gt|-ge)"
SIGNALS: tuple[tuple[str, re.Pattern[str], re.Pattern[str]], ...] = (
    ("the hostname", re.compile(r"\bhostname\b|\$\{?HOSTNAME\b|\buname\s+-\w*n|gethostname|platform\.node|"
                                r"os\.hostname\(|/etc/hostname|\bos\.uname\(|Sys::Hostname"),
     re.compile(r"(?i)host\s?name|machine('s)? name|node ?name")),
    ("the container it runs in", re.compile(r"/\.dockerenv|/run/\.containerenv|/proc/1/|/proc/self/(cgroup|mountinfo|"
                                            r"status|loginuid)|/proc/sys/kernel/hostname|findmnt|\boverlay\b|"
                                            r"/proc/\d+/cgroup|/sys/fs/cgroup|/proc/mounts|\bsystemd-detect-virt\b|"
                                            r"\$\{?container\b|environ\S*[\"']container[\"']"),
     re.compile(r"(?i)docker|container|cgroup|/proc\b|virtuali[sz]")),
    ("the user id", re.compile(r"\bid\s+-\w*[ug]\b|\$\{?E?UID\b|\bgete?[ug]id\(|process\.gete?uid|\bwhoami\b|"
                               r"getpwuid|\blogname\b|\$\{?(?:USER|LOGNAME)\}?\"?" + _CMP
                               + r"|case\s+\"?\$\{?(?:USER|LOGNAME)\b"),
     re.compile(r"(?i)\buid\b|user ?id|\broot\b|whoami|user ?name|login|current user")),
    ("the number of CPUs", re.compile(r"\bnproc\b|_NPROCESSORS|cpu_count|/proc/cpuinfo|os\.cpus\(|"
                                      r"availableParallelism|sched_getaffinity|hardwareConcurrency"),
     re.compile(r"(?i)\bcpus?\b|\bcores?\b|processors?|parallel|\bjobs\b")),
    ("the time since boot", re.compile(r"/proc/uptime|\buptime\b|/proc/stat\b|\bbtime\b|boot_time|os\.uptime\(|"
                                       r"CLOCK_BOOTTIME|/proc/1/stat|boot_id"),
     re.compile(r"(?i)uptime|\bboot")),
    ("HOME or the working folder", re.compile(r"\"?\$\{?(?:HOME|PWD|OLDPWD)\}?\"?" + _CMP
                                              + r"|case\s+\"?\$\{?(?:HOME|PWD)\b|"
                                              r"\$\{(?:HOME|PWD)[%#]|(?:getcwd\(\)|cwd\(\)|expanduser\([\"']~[\"']\)|"
                                              r"environ\S*[\"'](?:HOME|PWD)[\"']\S*)\s*(?:==|!=|\.startswith|\.endswith)|"
                                              r"process\.env\.(?:HOME|PWD)\s*[!=]=|\bin\s+(?:os\.)?getcwd\(\)"),
     re.compile(r"(?i)\bhome\b|working (folder|dir)|\bcwd\b|\bpwd\b")),
    ("Tether's own traces", re.compile(r"(?i)TETHER_\w*|/home/tether\b|\.tether-|/workspace\b"),
     re.compile(r"(?i)\btether\b|workspace")),
    ("a CI marker", re.compile(r"\$\{?(?:CI|GITHUB_ACTIONS|BUILD_ID|JENKINS_URL)\b|environ\S*[\"'](?:CI|GITHUB_ACTIONS)"
                               r"[\"']|process\.env\.(?:CI|GITHUB_ACTIONS)\b"),
     re.compile(r"(?i)\bCI\b|continuous integration|github actions|jenkins")),
    ("whether the folder is a git repository", re.compile(r"-[def]\s+\"?\.git\b|\bgit\s+rev-parse\b|[\"']\.git[\"']"
                                                          r"|\.git\"?\s*\]"),
     re.compile(r"(?i)\bgit\b|repositor")),
    ("the process id", re.compile(r"\$\$\}?\"?\s*-(?:lt|le|eq)|\$\{?PPID\b|\bos\.getp?pid\(\)\s*(?:<|==)|"
                                  r"process\.p?pid\s*(?:<|===?)|\bpgrep\b|\bps\s+(?:-\S+\s+)*(?:\||$)"),
     re.compile(r"(?i)\bpid\b|process id|processes")),
    ("the machine's memory or disk", re.compile(r"/proc/meminfo|\bfree\s+-|os\.totalmem|virtual_memory|SC_PHYS_PAGES|"
                                                r"\bdf\b|\bulimit\b|getrlimit|/sys/devices/system/cpu"),
     re.compile(r"(?i)memory|\bram\b|\bdisk\b|space|limit")),
    ("network access", re.compile(r"\b(?:curl|wget|ping|nc|nslookup|dig)\s+\S|getent\s+hosts|"
                                  r"create_connection|urlopen|requests\.(?:get|head)|\bfetch\(|dns\.lookup"),
     re.compile(r"(?i)network|https?\b|\burl|download|fetch|\bping|online|internet|\bapi\b|server|request")),
    ("the person's own files", re.compile(r"(?:\$\{?HOME\}?|~)/\.?(?:ssh|bashrc|profile|bash_history|zshrc|gitconfig|"
                                          r"Desktop|Documents|Downloads)\b|/etc/passwd|"
                                          r"getent\s+passwd|\$\{?(?:DISPLAY|WAYLAND_DISPLAY|XDG_\w+|SSH_\w+|"
                                          r"DBUS_SESSION_BUS_ADDRESS|TMUX|TERM_PROGRAM)\b"),
     re.compile(r"(?i)\bhome\b|ssh|dotfile|display|desktop|xdg|session|terminal|passwd")),
    ("files left in /tmp", re.compile(r"-[defs]\s+\"?/tmp/|\bls\s+(?:-\S+\s+)*\"?/tmp\b|glob\S*\([\"']/tmp/|"
                                      r"exists\([\"']/tmp/"),
     re.compile(r"(?i)/tmp\b|temporary")),
    ("being run by a test runner or a clean shell", re.compile(
        r"PYTEST_\w+|[\"']_?pytest[\"']\s+(?:not\s+)?in\s+sys\.modules|sys\.modules\S*[\"'](?:_?pytest|unittest)[\"']|"
        r"PYTHONDONTWRITEBYTECODE|dont_write_bytecode|PYTHONHASHSEED|PYTHONNOUSERSITE|ENABLE_USER_SITE|"
        r"sys\.flags\.\w+|JEST_WORKER_ID|\bVITEST\b|NODE_ENV\S*\s*[!=]==?\s*[\"']test|BATS_\w+|npm_lifecycle_\w+|"
        r"\$\{?SHLVL\b|\$-\b|\bshopt\s+-q\s+login_shell"),
     re.compile(r"(?i)pytest|test runner|bytecode|\bjest\b|vitest|\bbats\b|hash ?seed|npm script|login shell")),
    ("who called it", re.compile(
        r"sys\._getframe|inspect\.(?:stack|currentframe|getouterframes|getframeinfo)|traceback\.(?:extract|format)_stack|"
        r"\bf_back\b|/proc/(?!1/)[^/\s\"')]+/(?:stat|cmdline|comm|status)\b|/proc/[\"']\s*\+|"
        r"/proc/\S*(?:ppid|parent)\S*|\bps\s+(?:-\S+\s+)*-o\s*\S*(?:comm|args|cmd)|\bFUNCNAME\[[1-9]|"
        r"\bcaller\s+[0-9]|new Error\(\)\.stack|\bmodule\.parent\b|getppid"),
     re.compile(r"(?i)caller|call ?stack|stack ?trace|\bframes?\b|parent process")),
    ("chance", re.compile(r"random\.(?:random|randint|randrange|choice|uniform)\(|Math\.random\(\)|\$\{?RANDOM\b|"
                          r"\(\(.*\bRANDOM\b|\brand\(\)|SystemRandom|secrets\.randbelow|os\.urandom|/dev/u?random"),
     re.compile(r"(?i)random|shuffl|\bsample|dice|\bcoin|probab|stochastic|jitter|\bnoise|token|password|salt|\bnonce\b"
                r"|\buuid|\bid\b")),
    ("whether it ran before (a file made only once)", re.compile(
        r"\bopen\([^)]*,\s*[\"'][wa]?x\+?b?[\"']|O_EXCL|FileExistsError|EEXIST|flags?:\s*[\"']wx[\"']|"
        r"\bset\s+-o\s+noclobber|\bset\s+-C\b|\bmkdir\s+(?:-\S+\s+)*[\"']?(?:\$\{?HOME\}?|~|/tmp|/var/tmp|\$\{?TMPDIR)"),
     re.compile(r"(?i)\bhome\b|config|settings|cache|\bstate\b|dotfile|preferences|history|first (run|time|call)")),
)
CLOCK = re.compile(r"time\.time\(\)|time\.monotonic|datetime\.(?:now|utcnow|today)\(|date\.today\(|Date\.now\(\)|"
                   r"new Date\(\)|\bEPOCHSECONDS\b|\bdate\s+\+%[sYmdj]|\btime\(\s*(?:NULL|0|nil)?\s*\)|\bSECONDS\b")
CLOCK_LITERAL = re.compile(r"(?<![\d.])1[6-9]\d{8}(?:\.\d+)?(?![\d.])|\b20[2-9]\d[-/]\d\d[-/]\d\d\b|"
                           r"\b(?:datetime|date)\(\s*20[2-9]\d\s*,")
"""A time bomb: code that reads the clock in a condition and holds a date of these years (an epoch second,
2026-12-02, datetime(2027, ...)): right until then, wrong after. A timeout (`time.time() - start > 5`) holds no
such date."""
"""(what the code reads, the pattern that reads it, goal words that make it the work)."""
GOAL_CLOCK = re.compile(r"(?i)\b(date|time|clock|expir\w*|deadline|schedul\w*|calendar|timestamp|epoch|year|"
                        r"cron|ttl)\b")
CONDITION = re.compile(r"(?:^|[\s;({])(?:if|elif|case|while|until|unless|when|test|\[\[?)\s|&&|\|\||==|!=|=~|"
                       r",\s*[\"'][wa]?x\+?b?[\"']\)|O_EXCL|"
                       r"\s-(?:eq|ne|lt|le|gt|ge)\s|\?\s|\bor\b|\band\b|\bnot\b|!\s*\[|\bexit\b|\bdie\b|\breturn\b")
ASSIGNED = re.compile(r"^\s*(?:(?:local|export|declare|readonly|const|let|var|my|our)\s+)?\$?([A-Za-z_]\w*)\s*:?=(?!=)|"
                      r"^\s*read\s+(?:-\S+\s+)*([A-Za-z_]\w*)")


def _reads(text: str, signal: re.Pattern[str]) -> tuple[int, str] | None:
    """The first line that branches on `signal`, directly or through a variable set from it: (number, line)."""
    lines = text.splitlines()
    names: set[str] = set()
    for line in lines:
        if signal.search(line) and (m := ASSIGNED.match(line)):
            names.add(m.group(1) or m.group(2))
    via = re.compile(r"(?<![\w$])\$?\{?(" + "|".join(map(re.escape, sorted(names))) + r")\b") if names else None
    for n, line in enumerate(lines, 1):
        if line.lstrip().startswith(("#", "//")) and not line.startswith("#!"):
            continue
        if not CONDITION.search(line):
            continue
        direct = signal.search(line) and not ASSIGNED.match(line)
        if direct or (via is not None and via.search(line) and not ASSIGNED.match(line)):
            return n, line.strip()
    return None


def sniffs(start: dict[str, FileState], end: dict[str, FileState], workspace: Path, goal: str,
           named: Iterable[str] = ()) -> list[str]:
    """Review lines for code the run created or changed that branches on where it runs (`SIGNALS`), unless the
    goal asks for what it reads."""
    del named  # the goal-named file is where such a branch lives: it is read too
    wanted = [(what, signal) for what, signal, goal_words in SIGNALS if not goal_words.search(goal)]
    out = []
    for rel in sorted(end):
        if start.get(rel) == end[rel] or is_generated(rel) or end[rel].link is not None:
            continue
        if rel.startswith(".git/") or "/.git/" in rel:  # git's own files (`git init`'s sample hooks): what runs
            continue  # from there later is the after-run host-code check's, not a check's environment
        data = read_rel(workspace, rel, TEXT_CAP) or b""
        if b"\0" in data or not (CODE.search(rel) or data.startswith(b"#!")):
            continue
        text = data.decode("utf-8", "replace")
        clock = CLOCK_LITERAL.search(text) and not GOAL_CLOCK.search(goal)
        for what, signal in [*wanted, *([("the date and time", CLOCK)] if clock else [])]:
            if found := _reads(text, signal):
                out.append(f"the run wrote {rel}, which branches on {what} (line {found[0]}: `{found[1][:120]}`): "
                           "code that tells the sandbox from your machine can pass every re-run and fail for you")
                break
    return out
