"""DATA and reading: which database server a CLI talks to, and whether it is a local test database.

Why: wiping a table of `app_test` on localhost is ordinary test set-up; the same SQL against a
remote server or a database with any other name may be someone's data. Only what the command line
itself says counts: a server or database the CLI would take from its environment or a config file
(PGHOST, ~/.my.cnf) is unknown, so psql/mysql without a host option are not local here. redis-cli
without `-h`/`-u`/`-s` talks to 127.0.0.1 of wherever it runs, which a wrapper may make another
machine (`kubectl exec redis-0 -- redis-cli FLUSHALL`): it too needs the host named.
"""

from __future__ import annotations

import re

from tether.guardian.lazy_re import Lazy
from tether.guardian.management_table import PROD
from tether.guardian.rules import Inv
from tether.guardian.words import UNKNOWN

# fmt: off
SERVERS: dict[str, dict[str, str]] = {
    # host: options naming the server; socket: options naming a unix socket (local by construction);
    # db: options naming the database; valued: the other options that take a separate value;
    # url: options whose value is a connection URL; hostenv / dbenv: the variables set in the line that
    # name them; default: "local" when the CLI talks to loopback without a host option.
    "psql": {"host": "-h --host", "socket": "", "db": "-d --dbname", "url": "",
             "valued": "-p --port -U --username -c --command -f --file -v --set --variable -o --output "
                       "-L --log-file -P --pset -F --field-separator -R --record-separator -T --table-attr",
             "hostenv": "PGHOST", "dbenv": "PGDATABASE", "default": ""},
    "mysql": {"host": "-h --host", "socket": "-S --socket", "db": "-D --database", "url": "",
              "valued": "-P --port -u --user -e --execute --protocol --default-character-set",
              "hostenv": "MYSQL_HOST", "dbenv": "", "default": ""},
    "redis-cli": {"host": "-h", "socket": "-s", "db": "", "url": "-u",
                  "valued": "-p -a -n --user --pass -i -r --pattern --tls --cacert --cert --key",
                  "hostenv": "", "dbenv": "", "default": ""},
}
ALIASES = {"mariadb": "mysql", "valkey-cli": "redis-cli", "keydb-cli": "redis-cli"}
LOOPBACK = r"^(?:localhost|127(?:\.\d{1,3}){3}|::1|\[::1\]|0\.0\.0\.0)$"
"""Host values that are this machine; a value starting with `/` is a unix-socket folder (psql -h /run/x)."""
TEST_DB = r"(?i)^(?:test|tests|testing|test[_-][\w-]+|[\w-]+[_-]test(?:s|ing)?(?:[_-]\d+)?)$"
"""Database names that say they are a test database: `test`, `test_app`, `app_test`, `app-test-1`."""
# fmt: on
_LOOPBACK = Lazy(LOOPBACK)
_TEST_DB = Lazy(TEST_DB)
_PROD = Lazy(PROD, re.I)
_URL = Lazy(r"^[a-z][\w+.-]*://(?:[^@/]*@)?(\[[^\]]*\]|[^:/?]*)(?::\d+)?(?:/([^?#]*))?")
_DROP_DB = Lazy(r"(?i)\bdrop\s+(?:database|schema)\s+(?:if\s+exists\s+)?[`\"']?([\w-]+)")


def _table(inv: Inv) -> dict[str, str] | None:
    return SERVERS.get(ALIASES.get(inv.prog, inv.prog))


def _options(inv: Inv, t: dict[str, str]) -> tuple[dict[str, str], list[str]]:
    """Values of the host, socket, db and url options (by kind), and the positional operands."""
    kinds = {o: k for k in ("host", "socket", "db", "url") for o in t[k].split()}
    valued = set(t["valued"].split())
    found: dict[str, str] = {}
    pos: list[str] = []
    args = inv.args
    i = 0
    while i < len(args):
        a = args[i]
        name, eq, val = a.partition("=")
        if a.startswith("--") and eq and name in kinds:
            found[kinds[name]] = val
        elif a in kinds and i + 1 < len(args):
            found[kinds[a]] = args[i + 1]
            i += 1
        elif a in valued:
            i += 1
        elif len(a) > 2 and a[:2] in kinds and not a.startswith("--"):
            found[kinds[a[:2]]] = a[2:]  # -hlocalhost, -Dapp_test
        elif not a.startswith("-") or a == "-":
            pos.append(a)
        i += 1
    return found, pos


def _local_host(value: str) -> bool:
    return UNKNOWN not in value and (value.startswith("/") or bool(_LOOPBACK.match(value)))


def server(inv: Inv) -> tuple[bool, str]:
    """(whether the CLI talks to this machine, the database it connects to or '')."""
    t = _table(inv)
    if t is None:
        return False, ""
    found, pos = _options(inv, t)
    env = inv.simple.env
    host, db = found.get("host", ""), found.get("db", "")
    url = found.get("url", "") or next((p for p in pos[:1] if "://" in p), "") or (db if "://" in db else "")
    if url:
        m = _URL.match(url)
        if not m:
            return False, ""
        host, db = m.group(1) or "localhost", (m.group(2) or "").split("/")[0]
    elif not db and pos and inv.prog != "redis-cli":
        db = pos[0]  # psql DBNAME [USER], mysql DBNAME
    if not host and t["hostenv"]:
        host = env.get(t["hostenv"], "")
    if not db and t["dbenv"]:
        db = env.get(t["dbenv"], "")
    if "socket" in found:
        local = _local_host(found["socket"]) and not host or _local_host(host)
    elif host:
        local = _local_host(host)
    else:
        local = t["default"] == "local"
    return local, db


def test_database(name: str) -> bool:
    """A database whose name marks it as a test one (and names no production)."""
    return bool(name) and UNKNOWN not in name and bool(_TEST_DB.match(name)) and not _PROD.search(name)


FILE_DBS = {"sqlite3": "-cmd -init -separator -newline -nullvalue -vfs -lookaside -pagecache -mmap -maxsize -heap",
            "duckdb": "-c -cmd -init -s -separator -newline -nullvalue"}
"""CLIs whose database is a file (its first operand) and the options that take a separate value."""


def database_file(inv: Inv) -> str:
    """The database file sqlite3/duckdb opens (its first operand), or '' (none, `:memory:`, a URI)."""
    valued = FILE_DBS.get(inv.prog)
    if valued is None:
        return ""
    skip = set(valued.split())
    args = inv.args
    i = 0
    while i < len(args):
        a = args[i]
        if a in skip:
            i += 2
            continue
        if not a.startswith("-"):
            return "" if a.startswith((":", "file:")) or not a.strip() else a
        i += 1
    return ""


def workspace_file_db(inv: Inv) -> str:
    """The database file a wiping statement only writes (judged by the path policy), unless its name says production
    (`prod.duckdb`: a copy of production data is asked about like the server)."""
    path = database_file(inv)
    return "" if path and _PROD.search(path.rsplit("/", 1)[-1]) else path


def local_test_sql(inv: Inv, texts: list[str], destructive: re.Pattern[str]) -> bool:
    """psql/mysql/mariadb on this machine whose destructive SQL only touches test databases: each
    `DROP DATABASE x` names one, and any other wiping statement runs in a connected test database."""
    if _table(inv) is None or inv.prog.startswith(("redis", "valkey", "keydb")):
        return False
    local, db = server(inv)
    if not local:
        return False
    for text in texts:
        dropped = _DROP_DB.findall(text)
        if not all(test_database(d) for d in dropped):
            return False
        if destructive.search(_DROP_DB.sub("", text)) and not test_database(db):
            return False
    return True
