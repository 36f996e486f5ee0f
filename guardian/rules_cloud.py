"""Argv rules: destructive verbs of cloud, ops and data CLIs, and SQL.

All `ask`: each is a legitimate operation that destroys remote state that
no local undo brings back. Matching is by verb words so that new
subcommands (`aws ... delete-anything`) are caught without a table per API.
"""

from __future__ import annotations

import re

from tether.guardian import local_databases
from tether.guardian.management import inert, one_pod
from tether.guardian.rules import Inv, rule

_VERB = re.compile(
    r"^(?:delete|destroy|purge|prune|remove|rm|rb|rmdir|deletefile|forget|unregister|disable|"
    r"revoke|terminate|drop|del|uninstall|archive|compact|rdelete|repo-delete|remove-secret|"
    r"flush|wipe|erase|clear|deregister|detach-volume|cleanup|reset|truncate|kill|"
    r"force-delete|tombstone|unset|put-secret-value|update-secret|move|unsubscribe)"
    r"(?:$|[-_])|(?:^|[-_])(?:delete|destroy|purge|terminate|remove|drop)(?:$|[-_])|"
    r"^clear_|^delete_", re.I)
_SERVICE_CLIS = ("gh", "doppler", "op", "vault", "velero", "nats", "rabbitmqctl", "rabbitmqadmin",
                 "borg", "restic", "rclone", "circleci", "gitlab-runner", "glab", "heroku", "fly",
                 "flyctl", "vercel", "netlify", "firebase", "wrangler", "doctl", "linode-cli",
                 "hcloud", "oci", "ibmcloud", "s3cmd", "mc", "gsutil", "eksctl", "minikube", "kind",
                 "argocd", "consul", "nomad", "kafka-topics", "kafka-configs", "kafka-acls",
                 "kafka-consumer-groups", "kafka-delete-records", "kafka-topics.sh",
                 "kafka-configs.sh", "kafka-acls.sh", "kafka-consumer-groups.sh", "kafka-delete-records.sh",
                 "supabase", "planetscale", "pscale",
                 "stripe", "twilio", "redis-cli", "etcdctl", "ansible", "pulumi", "serverless",
                 "sls", "cdk", "sam", "copilot", "databricks", "snowsql", "bq", "cf", "juju")
SQL_DESTRUCTIVE = re.compile(r"\b(?:drop\s+(?:database|table|schema|index|view|user|role|keyspace|collection)|"
                  r"truncate\s+(?:table\s+)?\w|delete\s+from\s+\w+\s*(?:;|$|\"|')|"
                  r"flushall|flushdb|dropDatabase|\.drop\(\)|deleteMany\(\s*\{\s*\}\s*\)|"
                  r"alter\s+table\s+\w+\s+drop)|[)\]]\.drop\(\s*\)", re.I)
_SQL_CLIS = ("psql", "mysql", "mariadb", "sqlite3", "sqlcmd", "clickhouse-client", "cockroach",
             "mongo", "mongosh", "redis-cli", "cqlsh", "duckdb", "snowsql", "bq", "sqlplus")


def _verbs(words: list[str]) -> bool:
    return any(_VERB.search(w) for w in words)


def destructive_word(word: str) -> bool:
    """Whether one verb word deletes, destroys, purges or revokes (`delete-stack`, `apps:destroy`)."""
    return bool(_VERB.search(word) or _VERB.search(word.rsplit(":", 1)[-1]))


@rule("CLOUD-001", "cloud-destructive", "ask", "aws",
      "AWS call that deletes, terminates, purges or overwrites resources or secrets",
      "aws s3 rm s3://bucket --recursive")
def _aws(inv: Inv) -> bool:
    if inert(inv):
        return False
    pos = inv.positional
    if pos[:2] == ["s3", "sync"] or pos[:2] == ["s3", "mv"]:
        return "--delete" in inv.long or pos[1] == "mv"
    return _verbs(pos[1:3]) or "--force-delete-without-recovery" in inv.long


@rule("CLOUD-002", "cloud-destructive", "ask", "gcloud", "gcloud command that deletes resources",
      "gcloud compute instances delete vm-1")
def _gcloud(inv: Inv) -> bool:
    if inert(inv):
        return False
    return _verbs(inv.positional[1:5])


@rule("CLOUD-003", "cloud-destructive", "ask", "az", "Azure CLI command that deletes resources",
      "az group delete --name prod-rg")
def _az(inv: Inv) -> bool:
    if inert(inv):
        return False
    return _verbs(inv.positional[1:4])


@rule("CLOUD-004", "cloud-destructive", "ask", ("kubectl", "helm", "oc", "k9s"),
      "deletes Kubernetes objects or releases, or drains nodes", "kubectl delete namespace prod")
def _kube(inv: Inv) -> bool:
    if inert(inv) or one_pod(inv):
        return False  # one named pod is recreated by its controller (`management.one_pod`)
    pos = inv.positional
    if inv.prog == "helm":
        return pos[:1] in (["uninstall"], ["delete"], ["del"], ["rollback"])
    return bool(set(pos[:1]) & {"delete", "drain", "replace", "cordon", "taint"}) or (
        pos[:1] == ["apply"] and "--prune" in inv.long) or (pos[:1] == ["scale"] and any(
            a in ("--replicas=0",) for a in inv.args))


@rule("CLOUD-005", "cloud-destructive", "ask", ("terraform", "tofu", "pulumi", "terragrunt", "cdk"),
      "destroys infrastructure", "terraform destroy -auto-approve")
def _iac(inv: Inv) -> bool:
    if inert(inv):
        return False
    pos = inv.positional
    return "destroy" in pos[:2] or any(a == "-destroy" for a in inv.args) or (
        pos[:2] == ["state", "rm"]) or "--destroy" in inv.long


@rule("CLOUD-006", "cloud-destructive", "ask", _SERVICE_CLIS,
      "service CLI verb that deletes, purges, revokes or disables remote state",
      "gh repo delete owner/repo --yes")
def _services(inv: Inv) -> bool:
    if inert(inv):
        return False
    pos = inv.positional
    if inv.prog == "redis-cli":
        return False
    if inv.prog == "rclone":
        return _verbs(pos[:1]) or (pos[:1] == ["sync"] and not inv.has("--dry-run", "n"))
    if inv.prog == "gh" and pos[:1] == ["api"]:
        return any(a.upper() in ("DELETE", "-XDELETE") for a in inv.args)
    if inv.prog.startswith("kafka-"):
        return inv.prog.removesuffix(".sh") == "kafka-delete-records" or bool(inv.long & {"--delete", "--remove",
                                                                       "--delete-config"})
    if inv.prog == "vault":
        return _verbs(pos[:3]) and pos[:1] != ["read"]
    return _verbs(pos[:3]) or bool(inv.long & {"--delete", "--prune", "--purge", "--all-runners"})


@rule("CLOUD-007", "cloud-destructive", "ask", ("curl", "wget", "http", "https", "xh", "java"),
      "HTTP DELETE or delete endpoint called on a service", "curl -X DELETE http://localhost:9200/_all")
def _http_delete(inv: Inv) -> bool:
    joined = " ".join(inv.args)
    if inv.prog == "java":
        return "jenkins-cli" in joined and bool(re.search(r"\s(?:delete|disconnect|remove)-\w+", joined))
    return bool(re.search(r"(?:-X\s*|--request[ =]|--method[ =]|^|\s)DELETE\b", joined)) or \
        "/doDelete" in joined


@rule("DB-001", "database-destructive", "ask", _SQL_CLIS,
      "SQL or data command that drops, truncates or deletes everything (not a test database on this machine; "
      "a database file is a write the path policy judges)",
      "psql -c 'DROP DATABASE prod'")
def _sql(inv: Inv) -> bool:
    texts = list(inv.args)
    if inv.simple.stdin:
        texts.append(inv.simple.stdin)
    if inv.prog == "redis-cli":
        return any(a.lower() in ("flushall", "flushdb") for a in inv.args)
    if not any(SQL_DESTRUCTIVE.search(t) for t in texts):
        return False
    if local_databases.workspace_file_db(inv):
        return False  # a database file: a write the path policy judges (`targets.write_targets`)
    return not local_databases.local_test_sql(inv, texts, SQL_DESTRUCTIVE)


@rule("DB-002", "database-destructive", "ask", ("dropdb", "mysqladmin", "dropuser", "mongorestore",
                                                 "pg_restore"),
      "drops a database or restores over one", "dropdb production")
def _dropdb(inv: Inv) -> bool:
    if inv.prog == "mysqladmin":
        return bool(set(inv.positional) & {"drop", "shutdown"})
    if inv.prog in ("mongorestore", "pg_restore"):
        return inv.has("--drop", "c", "--clean")
    return bool(inv.positional)
