"""DATA: destructive operations of management CLIs, and the scope that makes them deny or ask.

Read only by `guardian.management` (which applies it). A literal module, like
`programs_table`, so that `tether guard` imports it from bytecode. Facts are
from each tool's public reference; the table is written for this project.

Tool entry keys (all optional but `fam` and `verbs`):
    fam: family (container, orchestrator, paas, orm, store, cloud), for coverage.
    aka: other names of the same tool, space separated.
    gvalued: global options that take a separate value (so the verb is found:
        `docker -H host system prune`, `kubectl -n ns delete`); subvalued: the
        same for the options of a first verb word (`docker compose -f F down`).
    generic: a destructive verb word the table does not list (`delete`, `destroy`,
        `purge`, ... as in `rules_cloud`) among the first positionals asks, so that
        scope (production, every object) applies to it too.
    critical: a regex; a target matching it breaks the whole system (`kube-system`): deny.
    denytext: a regex; an argument or stdin text matching it wipes everything
        (`EVAL "..flushall.."`, `echo FLUSHALL | redis-cli`): deny.
    wide: options that select every object (`--all`, `-A`): deny on any
        destructive verb.
    lists: verbs (words joined by `.`) that print object ids (`ps`, `volume.ls`, `keys`):
        what they print, fed into a destructive verb (`$(..)`, `| xargs`), is
        every object unless the lister filters.
    filters: lister options that narrow what it prints (`--filter`, `--pattern`).
    plans: options of `plan` that make the saved plan (`-out=F`) destroy: `apply F`
        later in the line is judged as a destroy (deny).
    verbs: verb words (space separated, `:` kept: `apps:destroy`) -> entry.
Verb entry keys:
    do: the decision for the verb itself: allow, ask or deny.
    cat: "infra" (cloud-destructive) or "data" (database-destructive); default
        the tool's (`data` for orm and store families, else `infra`).
    ask / deny: options that raise it to ask / deny (`-v`, `--volumes`,
        `--skip-final-snapshot`); `-x` also matches inside a cluster (`-af`).
    narrow: options that limit a deny verb to named objects (`-target`): ask.
    need: options without which the verb destroys nothing (`compose down` needs
        `-v` to remove volumes): none of them present -> allow.
    mass: the decision when a target is every object (a lister's output, `*`,
        `_all`), default deny.
    root: a regex; a target matching it is the whole container (a bucket's
        root, `/` of a database): deny (with one of `rootneed`, when given:
        `--recursive`; not with `--include`, which picks some keys);
        `rootbare`: no target at all is the root too (`consul kv delete -recurse`).
    zero: `migrate APP zero` (every migration undone) asks.
    onepod: `kubectl delete pod NAME`: one named pod outside production and kube-* (`management.one_pod`),
        which its controller recreates: allow.
    redo: verbs (words joined by `+`) that migrate back up: a rollback followed later in the same line by
        the same tool running one of them (`alembic downgrade -1 && alembic upgrade head`) is a round trip
        that ends where it began (a down migration's own test): its ask is dropped; a deny stays.
    text: a regex; an argument after the verb (or stdin) matching it asks: code
        that wipes tables (`rails runner 'User.delete_all'`, `manage.py shell -c`).
    testenv: environment variables by which the tool picks its database (RAILS_ENV,
        MIX_ENV, NODE_ENV for sequelize/knex, APP_ENV for artisan): set to `test`
        or `testing`, or `--env test`, with no DATABASE_URL beside it, the reset
        is of the test database, ordinary CI work: allow. Tools without it
        (prisma, typeorm: DATABASE_URL decides) get no such exemption.
    denyenv: environment variables whose presence removes the tool's own
        safety check (DISABLE_DATABASE_ENVIRONMENT_CHECK): deny.
    local: the decision when the server is this machine (`local_databases.server`: loopback, a unix
        socket, redis-cli without -h) and no target is unknown or a pattern; `localmax`: at most that
        many named targets (`redis-cli -h localhost DEL session:test` allow, FLUSHDB there ask).
        Production words and `mass` (a lister's whole output) still win.
A destructive verb (ask or deny) whose arguments, options or environment name
a production target (`prod`, `production`, `prd`, `live` as a word part, or
RAILS_ENV/NODE_ENV/... = production) is deny; `--help`, `-h` and dry-runs are
always allow (see `SAFE`).
"""

# fmt: off
_K8S_DELETE = {"do": "ask", "onepod": True}
_SQL_WIPE = r"(?i)\b(?:drop\s+(?:database|table|schema)|truncate\s+(?:table\s+)?\w|delete\s+from\s+\w+\s*(?:;|$))"
_WIPE_CODE = (r"(?i)\.(?:delete_all|destroy_all|truncate)\b|objects\.all\(\)\.delete\(|\bdrop_table\b|"
              r"\bdrop\s+(?:table|database|schema)\b|\btruncate\s+table\b|Repo\.delete_all|::truncate\(|"
              r"\.query\(\w+\)\.delete\(|deleteMany\(\s*\{?\s*\}?\s*\)")
MANAGEMENT: dict[str, dict] = {
    # ---- container engines ----
    "docker": {"fam": "container", "aka": "podman nerdctl finch",
        "gvalued": "-H --host -c --context --config -l --log-level --namespace -n --url --connection",
        "lists": "ps container.ls container.list volume.ls volume.list images image.ls image.list network.ls "
                 "service.ls stack.ls secret.ls config.ls node.ls",
        "filters": "-f --filter",
        "subvalued": {"compose": "-f --file -p --project-name --env-file --profile --project-directory"},
        "verbs": {
            "system prune": {"do": "allow", "ask": "-a --all", "deny": "--volumes"},
            "system reset": {"do": "deny"},
            "volume prune": {"do": "deny", "cat": "data"},
            "volume rm": {"do": "ask", "cat": "data", "deny": "-a --all"},
            "volume remove": {"do": "ask", "cat": "data", "deny": "-a --all"},
            "image prune": {"do": "allow", "ask": "-a --all"},
            "container prune": {"do": "allow"},
            "rm": {"do": "allow", "mass": "deny", "deny": "-a --all"},
            "kill": {"do": "allow", "mass": "ask"},
            "container rm": {"do": "allow", "mass": "deny", "deny": "-a --all"},
            "container remove": {"do": "allow", "mass": "deny", "deny": "-a --all"},
            "pod rm": {"do": "allow", "mass": "deny", "deny": "-a --all"},
            "rmi": {"do": "allow", "mass": "ask", "ask": "-a --all"}, "image rm": {"do": "allow", "mass": "ask",
                                                                             "ask": "-a --all"},
            "image remove": {"do": "allow", "mass": "ask", "ask": "-a --all"},
            "compose down": {"do": "ask", "need": "-v --volumes", "cat": "data"},
            "compose rm": {"do": "ask", "need": "-v --volumes", "cat": "data"},
            "stack rm": {"do": "ask"}, "swarm leave": {"do": "ask", "need": "-f --force"},
            "service rm": {"do": "ask"}, "service remove": {"do": "ask"}, "secret rm": {"do": "ask"},
            "node rm": {"do": "ask"},
        }},
    "crictl": {"fam": "container", "lists": "ps pods images", "filters": "--label --name --namespace --pod --state",
        "verbs": {"rmp": {"do": "ask", "deny": "-a --all"}, "rm": {"do": "ask", "deny": "-a --all"},
                  "rmi": {"do": "allow", "mass": "ask", "ask": "-a --all --prune"},
                  "stopp": {"do": "ask", "deny": "-a --all"}}},
    "lxc": {"fam": "container", "aka": "incus lxc-destroy",
        "verbs": {"delete": {"do": "ask"}, "rm": {"do": "ask"}, "storage delete": {"do": "ask", "cat": "data"},
                  "storage volume delete": {"do": "ask", "cat": "data"}, "project delete": {"do": "ask"}}},
    "virsh": {"fam": "container",
        "verbs": {"undefine": {"do": "ask", "deny": "--remove-all-storage --wipe-storage --storage"},
                  "destroy": {"do": "ask"}, "vol-delete": {"do": "ask", "cat": "data"},
                  "pool-delete": {"do": "deny", "cat": "data"}, "vol-wipe": {"do": "deny", "cat": "data"}}},
    "vagrant": {"fam": "container", "verbs": {"destroy": {"do": "ask"}, "box remove": {"do": "allow",
                                                                                      "ask": "--all"}}},
    "docker-compose": {"fam": "container", "aka": "podman-compose", "gvalued": "-f --file -p --project-name "
                                                                            "--env-file --profile",
        "verbs": {"down": {"do": "ask", "need": "-v --volumes", "cat": "data"},
                  "rm": {"do": "ask", "need": "-v --volumes", "cat": "data"}}},
    # ---- orchestrators ----
    "kubectl": {"fam": "orchestrator", "aka": "oc microk8s.kubectl k3s-kubectl kubecolor",
        "gvalued": "-n --namespace --context --cluster --kubeconfig -s --server --user --as -l --selector",
        "wide": "--all -A --all-namespaces",
        "lists": "get", "filters": "-l --selector --field-selector",
        "critical": r"^(?:(?:namespaces?|ns)/)?kube-(?:system|public|node-lease)$",
        "verbs": {"delete": _K8S_DELETE, "drain": {"do": "ask"}, "replace": {"do": "ask", "need": "--force"},
                  "delete-project": {"do": "ask"}, "cordon": {"do": "ask"}}},
    "helm": {"fam": "orchestrator", "gvalued": "-n --namespace --kube-context --kubeconfig",
        "wide": "--all -A --all-namespaces", "lists": "list ls", "filters": "-f --filter -l --selector",
        "verbs": {"uninstall": {"do": "ask"}, "delete": {"do": "ask"}, "del": {"do": "ask"}, "un": {"do": "ask"},
                  "rollback": {"do": "ask"}}},
    "minikube": {"fam": "orchestrator", "aka": "k3d kind", "wide": "--all",
        "verbs": {"delete": {"do": "ask"}, "cluster delete": {"do": "ask"}, "delete cluster": {"do": "ask"},
                  "delete clusters": {"do": "ask"}}},
    # ---- PaaS CLIs ----
    "heroku": {"fam": "paas", "generic": True, "verbs": {
        "apps:destroy": {"do": "ask"}, "destroy": {"do": "ask"}, "pg:reset": {"do": "ask", "cat": "data"},
        "addons:destroy": {"do": "ask"}, "pg:backups:delete": {"do": "ask", "cat": "data"},
        "redis:cli": {"do": "allow"}, "run:detached": {"do": "allow"},
        "pg:backups:restore": {"do": "ask", "cat": "data"}, "pg:copy": {"do": "ask", "cat": "data"},
        "pg:psql": {"do": "allow", "cat": "data", "text": _SQL_WIPE}}},
    "firebase": {"fam": "paas", "verbs": {
        "projects:delete": {"do": "deny"}, "hosting:disable": {"do": "ask"},
        "firestore:delete": {"do": "ask", "cat": "data", "deny": "--all-collections", "root": r"^/?$"},
        "database:remove": {"do": "ask", "cat": "data", "root": r"^/?$"},
        "database:set": {"do": "ask", "cat": "data", "root": r"^/?$"},
        "functions:delete": {"do": "ask"}, "auth:delete": {"do": "ask", "cat": "data"},
        "hosting:channel:delete": {"do": "ask"}, "storage:delete": {"do": "ask", "cat": "data"}}},
    "vercel": {"fam": "paas", "verbs": {"remove": {"do": "ask"}, "rm": {"do": "ask"},
        "project rm": {"do": "ask"}, "project remove": {"do": "ask"}, "env rm": {"do": "ask"},
        "domains rm": {"do": "ask"}}},
    "fly": {"fam": "paas", "aka": "flyctl", "verbs": {
        "apps destroy": {"do": "ask"}, "destroy": {"do": "ask"}, "apps delete": {"do": "ask"},
        "volumes destroy": {"do": "ask", "cat": "data"}, "volumes delete": {"do": "ask", "cat": "data"},
        "postgres destroy": {"do": "ask", "cat": "data"}, "machine destroy": {"do": "ask"},
        "secrets unset": {"do": "ask"}}},
    "netlify": {"fam": "paas", "verbs": {"sites:delete": {"do": "ask"}, "env:unset": {"do": "ask"},
        "blobs:delete": {"do": "ask", "cat": "data"}}},
    "railway": {"fam": "paas", "verbs": {"down": {"do": "ask"}, "delete": {"do": "ask"}}},
    "supabase": {"fam": "paas", "verbs": {"db reset": {"do": "ask", "cat": "data", "deny": "--linked --db-url"},
        "projects delete": {"do": "deny"}, "functions delete": {"do": "ask"}}},
    "neonctl": {"fam": "paas", "aka": "neon", "generic": True, "verbs": {"projects delete": {"do": "deny"},
        "branches delete": {"do": "ask", "cat": "data"}, "databases delete": {"do": "ask", "cat": "data"}}},
    "pscale": {"fam": "paas", "aka": "planetscale", "generic": True, "verbs": {
        "database delete": {"do": "ask", "cat": "data"}, "branch delete": {"do": "ask", "cat": "data"}}},
    "turso": {"fam": "paas", "generic": True, "verbs": {"db destroy": {"do": "ask", "cat": "data"},
        "group destroy": {"do": "ask", "cat": "data"}}},
    "doctl": {"fam": "cloud", "aka": "hcloud linode-cli oci ibmcloud", "generic": True, "verbs": {
        "databases delete": {"do": "ask", "cat": "data"}, "projects delete": {"do": "deny"}}},
    "eksctl": {"fam": "orchestrator", "generic": True, "verbs": {"delete cluster": {"do": "ask"}}},
    "wrangler": {"fam": "paas", "verbs": {"delete": {"do": "ask"}, "d1 delete": {"do": "ask", "cat": "data"},
        "kv namespace delete": {"do": "ask", "cat": "data"}, "r2 bucket delete": {"do": "ask", "cat": "data"},
        "d1 execute": {"do": "allow", "cat": "data", "text": _SQL_WIPE}}},
    # ---- ORMs and framework database commands ----
    "prisma": {"fam": "orm", "verbs": {"migrate reset": {"do": "ask"},
        "db push": {"do": "allow", "ask": "--force-reset --accept-data-loss"},
        "db execute": {"do": "ask", "need": "--stdin --file"}}},
    "rails": {"fam": "orm", "aka": "rake", "denyenv": "DISABLE_DATABASE_ENVIRONMENT_CHECK",
        "testenv": "RAILS_ENV RACK_ENV",
        "verbs": {v: {"do": "ask"} for v in (
            "db:drop db:drop:all db:reset db:schema:load db:structure:load db:purge db:purge:all "
            "db:migrate:reset db:truncate_all db:seed:replant db:setup db:test:purge db:rollback "
            "db:migrate:down db:drop:_unsafe").split()} | {
            "db:rollback": {"do": "ask", "redo": "db:migrate db:migrate:up"},
            "db:migrate:down": {"do": "ask", "redo": "db:migrate db:migrate:up"},
            "runner": {"do": "allow", "text": _WIPE_CODE}}},
    "manage.py": {"fam": "orm", "aka": "django-admin",
        "verbs": {"flush": {"do": "ask"}, "reset_db": {"do": "ask"}, "sqlflush": {"do": "allow"},
                  "reset_schema": {"do": "ask"}, "drop_test_database": {"do": "ask"},
                  "migrate": {"do": "allow", "zero": True}, "shell": {"do": "allow", "text": _WIPE_CODE},
                  "dbshell": {"do": "allow", "text": _WIPE_CODE}}},
    "alembic": {"fam": "orm", "gvalued": "-c --config -n --name -x",
        "verbs": {"downgrade": {"do": "ask", "redo": "upgrade"}, "stamp": {"do": "allow"}}},
    "flask": {"fam": "orm", "verbs": {"db downgrade": {"do": "ask", "redo": "db+upgrade"}, "db drop": {"do": "ask"},
        "shell": {"do": "allow", "text": _WIPE_CODE}}},
    "sequelize": {"fam": "orm", "aka": "sequelize-cli", "testenv": "NODE_ENV", "verbs": {
        "db:drop": {"do": "ask"}, "db:migrate:undo:all": {"do": "ask"},
        "db:migrate:undo": {"do": "ask", "redo": "db:migrate"},
        "db:seed:undo:all": {"do": "ask"}}},
    "knex": {"fam": "orm", "testenv": "NODE_ENV", "verbs": {
        "migrate:rollback": {"do": "ask", "redo": "migrate:latest migrate:up"},
        "migrate:down": {"do": "ask", "redo": "migrate:latest migrate:up"}}},
    "typeorm": {"fam": "orm", "aka": "typeorm-ts-node-commonjs typeorm-ts-node-esm", "verbs": {
        "schema:drop": {"do": "ask"}, "migration:revert": {"do": "ask", "redo": "migration:run"},
        "schema:sync": {"do": "ask"}}},
    "mikro-orm": {"fam": "orm", "verbs": {"schema:drop": {"do": "ask"}, "schema:fresh": {"do": "ask"},
        "migration:fresh": {"do": "ask"}, "migration:down": {"do": "ask", "redo": "migration:up"}}},
    "sqlx": {"fam": "orm", "verbs": {"database drop": {"do": "ask"}, "database reset": {"do": "ask"},
        "migrate revert": {"do": "ask", "redo": "migrate+run"}}},
    "drizzle-kit": {"fam": "orm", "verbs": {"drop": {"do": "ask"}, "push": {"do": "allow", "ask": "--force"}}},
    "artisan": {"fam": "orm", "testenv": "APP_ENV", "verbs": {v: {"do": "ask"} for v in
        "migrate:fresh migrate:reset migrate:refresh migrate:rollback db:wipe".split()} | {
            "migrate:rollback": {"do": "ask", "redo": "migrate"}, "tinker": {"do": "allow", "text": _WIPE_CODE}}},
    "mix": {"fam": "orm", "testenv": "MIX_ENV", "verbs": {"ecto.drop": {"do": "ask"}, "ecto.reset": {"do": "ask"},
        "ecto.rollback": {"do": "ask", "redo": "ecto.migrate"}, "run": {"do": "allow", "text": _WIPE_CODE}}},
    "ef": {"fam": "orm", "verbs": {"database drop": {"do": "ask"}, "database update": {"do": "allow"}}},
    "diesel": {"fam": "orm", "verbs": {"database reset": {"do": "ask"},
        "migration revert": {"do": "ask", "redo": "migration+run"},
        "migration redo": {"do": "ask"}}},
    "console": {"fam": "orm", "aka": "symfony", "testenv": "APP_ENV", "verbs": {v: {"do": "ask"} for v in (
        "doctrine:database:drop doctrine:schema:drop doctrine:fixtures:load doctrine:migrations:migrate:first "
        "doctrine:mongodb:schema:drop").split()} | {"doctrine:migrations:migrate": {"do": "allow", "zero": True}}},
    "dbmate": {"fam": "orm", "gvalued": "-u --url -e --env-file -d --migrations-dir --schema-file",
        "verbs": {"drop": {"do": "ask"}, "rollback": {"do": "ask", "redo": "up migrate"},
                  "down": {"do": "ask", "redo": "up migrate"}}},
    "flyway": {"fam": "orm", "verbs": {"clean": {"do": "ask"}}},
    "liquibase": {"fam": "orm", "verbs": {"drop-all": {"do": "ask"}, "dropAll": {"do": "ask"},
        "rollback": {"do": "ask"}, "rollback-count": {"do": "ask"}}},
    "goose": {"fam": "orm", "generic": True, "gvalued": "-dir -table -env -certfile", "verbs": {
        "reset": {"do": "ask"}, "down": {"do": "ask", "redo": "up up-by-one up-to"},
        "down-to": {"do": "ask", "redo": "up up-by-one up-to"}}},
    "migrate": {"fam": "orm", "gvalued": "-path -database -source", "verbs": {"drop": {"do": "ask"},
        "down": {"do": "ask", "redo": "up"}}},
    # ---- key-value and search stores ----
    "redis-cli": {"fam": "store", "aka": "valkey-cli keydb-cli",
        "gvalued": "-h -p -a -n -u -s --user --pass --pattern -i -r --tls --cacert",
        "lists": "--scan keys scan", "filters": "--pattern",
        "denytext": r"(?i)\bflush(?:all|db)\b",
        "verbs": {"flushall": {"do": "deny", "local": "ask"}, "flushdb": {"do": "deny", "local": "ask"},
                  "del": {"do": "ask", "mass": "deny", "local": "allow", "localmax": 1},
                  "unlink": {"do": "ask", "mass": "deny", "local": "allow", "localmax": 1},
                  "expire": {"do": "allow"}, "shutdown": {"do": "ask"},
                  "config set": {"do": "ask"}}},
    "etcdctl": {"fam": "store", "verbs": {"del": {"do": "ask", "root": r"^/?$", "rootneed": "--prefix --from-key"}}},
    "consul": {"fam": "store", "gvalued": "-token -token-file -http-addr -datacenter -namespace -partition -ca-file "
                                         "-client-cert -client-key -tls-server-name -cas -modify-index",
        "verbs": {"kv delete": {"do": "ask", "root": r"^/?$", "rootneed": "-recurse --recurse", "rootbare": True},
                  "snapshot restore": {"do": "ask"}}},
    "mc": {"fam": "store", "aka": "mcli", "verbs": {
        "rm": {"do": "ask", "root": r"^[\w.-]+/[\w.-]+/?$", "rootneed": "-r --recursive"},
        "rb": {"do": "ask", "deny": "--force"}}},
    "rclone": {"fam": "store", "verbs": {"purge": {"do": "ask", "root": r"^[\w.-]+:[\w.-]*/?$"},
        "delete": {"do": "ask", "root": r"^[\w.-]+:/?$"}}},
    "s3cmd": {"fam": "store", "verbs": {
        "del": {"do": "ask", "root": r"^s3://[^/]+/?\*?$", "rootneed": "-r --recursive"},
        "rm": {"do": "ask", "root": r"^s3://[^/]+/?\*?$", "rootneed": "-r --recursive"},
        "rb": {"do": "ask", "deny": "-f --force"}}},
    # ---- cloud CLIs (the generic verb rules CLOUD-001..006 ask on the rest) ----
    "aws": {"fam": "cloud", "generic": True, "gvalued": "--profile --region --output --endpoint-url --query",
        "verbs": {
            "s3 rm": {"do": "ask", "cat": "data", "root": r"^s3://[^/]+/?\*?$", "rootneed": "--recursive"},
            "s3 rb": {"do": "ask", "cat": "data", "deny": "--force"},
            "s3api delete-bucket": {"do": "ask", "cat": "data"},
            "ec2 terminate-instances": {"do": "ask"},
            "rds delete-db-instance": {"do": "ask", "cat": "data",
                                       "deny": "--skip-final-snapshot --delete-automated-backups"},
            "rds delete-db-cluster": {"do": "ask", "cat": "data", "deny": "--skip-final-snapshot"},
            "dynamodb delete-table": {"do": "ask", "cat": "data"},
            "cloudformation delete-stack": {"do": "ask"},
            "secretsmanager delete-secret": {"do": "ask", "deny": "--force-delete-without-recovery"},
            "organizations close-account": {"do": "deny"}, "iam delete-user": {"do": "ask"},
            "kms schedule-key-deletion": {"do": "ask", "cat": "data"}, "kms disable-key": {"do": "ask", "cat": "data"},
        }},
    "gcloud": {"fam": "cloud", "generic": True, "gvalued": "--project --account --configuration --format",
        "verbs": {"projects delete": {"do": "deny"}, "compute instances delete": {"do": "ask"},
                  "sql instances delete": {"do": "ask", "cat": "data"},
                  "sql databases delete": {"do": "ask", "cat": "data"},
                  "container clusters delete": {"do": "ask"},
                  "storage rm": {"do": "ask", "cat": "data", "root": r"^gs://[^/]+/?\*{0,2}$",
                                 "rootneed": "-r -R --recursive"},
                  "storage buckets delete": {"do": "ask", "cat": "data"},
                  "storage rsync": {"do": "allow", "cat": "data", "ask": "--delete-unmatched-destination-objects"},
                  "firestore databases delete": {"do": "ask", "cat": "data"}}},
    "gsutil": {"fam": "cloud", "gvalued": "-o -h -u",
        "verbs": {"rm": {"do": "ask", "cat": "data", "root": r"^gs://[^/]+/?\*{0,2}$", "rootneed": "-r -R"},
                  "rb": {"do": "ask", "cat": "data"}, "rsync": {"do": "allow", "cat": "data", "ask": "-d"}}},
    "az": {"fam": "cloud", "generic": True, "gvalued": "--subscription -o --output --query",
        "verbs": {"group delete": {"do": "ask"}, "vm delete": {"do": "ask"},
                  "sql db delete": {"do": "ask", "cat": "data"}, "sql server delete": {"do": "ask", "cat": "data"},
                  "storage account delete": {"do": "ask", "cat": "data"},
                  "cosmosdb delete": {"do": "ask", "cat": "data"},
                  "storage blob delete-batch": {"do": "ask", "cat": "data"}}},
    "terraform": {"fam": "cloud", "aka": "tofu terragrunt", "gvalued": "-chdir", "lists": "state.list",
        "plans": "-destroy --destroy",
        "verbs": {"destroy": {"do": "deny", "narrow": "-target"},
                  "apply": {"do": "allow", "deny": "-destroy --destroy", "ask": "-replace"},
                  "plan": {"do": "allow", "ask": "-destroy --destroy"}, "taint": {"do": "ask"},
                  "state rm": {"do": "ask"}, "workspace delete": {"do": "ask"},
                  "run-all destroy": {"do": "deny"}}},
    "pulumi": {"fam": "cloud", "gvalued": "-s --stack -C --cwd",
        "verbs": {"destroy": {"do": "deny", "narrow": "--target -t"}, "down": {"do": "deny", "narrow": "--target -t"},
                  "stack rm": {"do": "ask"}, "state delete": {"do": "ask"},
                  "up": {"do": "allow", "ask": "--replace --target-replace"},
                  "update": {"do": "allow", "ask": "--replace --target-replace"}}},
    "helmfile": {"fam": "orchestrator", "gvalued": "-e --environment -f --file -n --namespace -l --selector",
        "verbs": {"destroy": {"do": "ask"}, "delete": {"do": "ask"}}},
    "flux": {"fam": "orchestrator", "gvalued": "-n --namespace --context --kubeconfig",
        "verbs": {"uninstall": {"do": "ask"}, "delete": {"do": "ask"}}},
    "cdktf": {"fam": "cloud", "verbs": {"destroy": {"do": "deny", "narrow": "--target"}}},
    "nomad": {"fam": "orchestrator", "gvalued": "-address -namespace -region -token",
        "verbs": {"job stop": {"do": "ask"}, "stop": {"do": "ask"}, "namespace delete": {"do": "ask"},
                  "volume delete": {"do": "ask", "cat": "data"}}},
    "scw": {"fam": "cloud", "generic": True, "verbs": {"rdb instance delete": {"do": "ask", "cat": "data"}}},
    # ---- round 5 (rt19): clouds, PaaS, clusters, VMs and stores the table missed; `generic` asks on
    # any destructive verb word, scope (production, every object) raises it to deny ----
    "openstack": {"fam": "cloud", "aka": "nova cinder neutron glance heat swift manila trove",
        "generic": True, "gvalued": "--os-cloud --os-project-name --os-region-name --os-auth-url",
        "verbs": {"project purge": {"do": "deny"}}},
    "amplify": {"fam": "paas", "generic": True, "verbs": {"delete": {"do": "ask", "deny": "--force"}}},
    "vultr-cli": {"fam": "cloud", "aka": "vultr exo civo upcloud", "generic": True, "verbs": {}},
    "b2": {"fam": "store", "generic": True, "verbs": {
        "rm": {"do": "ask", "deny": "--versions", "root": r"^b2://[^/]+/?$", "rootneed": "--recursive -r"},
        "delete-bucket": {"do": "ask"}}},
    "kamal": {"fam": "paas", "generic": True, "gvalued": "-d --destination -c --config-file",
        "verbs": {"remove": {"do": "ask"}, "app remove": {"do": "ask"}, "accessory remove": {"do": "ask"}}},
    "eb": {"fam": "paas", "generic": True, "verbs": {"terminate": {"do": "ask", "deny": "--all"}}},
    "dokku": {"fam": "paas", "generic": True, "verbs": {"apps:destroy": {"do": "ask"},
        "postgres:destroy": {"do": "ask", "cat": "data"}, "mysql:destroy": {"do": "ask", "cat": "data"}}},
    "render": {"fam": "paas", "generic": True, "verbs": {}},
    "talosctl": {"fam": "orchestrator", "generic": True, "gvalued": "-n --nodes -e --endpoints --context",
        "verbs": {"reset": {"do": "deny"}}},
    "istioctl": {"fam": "orchestrator", "generic": True, "verbs": {"uninstall": {"do": "ask"}}},
    "skaffold": {"fam": "orchestrator", "generic": True, "gvalued": "-p --profile -f --filename -n --namespace",
        "verbs": {"delete": {"do": "ask"}}},
    "buildah": {"fam": "container", "generic": True, "verbs": {"rm": {"do": "allow", "ask": "-a --all"},
        "rmi": {"do": "allow", "ask": "-a --all"}}},
    "colima": {"fam": "container", "aka": "lima limactl orb orbctl", "generic": True, "verbs": {}},
    "multipass": {"fam": "container", "generic": True, "verbs": {"delete": {"do": "ask"},
        "purge": {"do": "ask"}}},
    "VBoxManage": {"fam": "container", "aka": "vboxmanage", "generic": True, "verbs": {
        "unregistervm": {"do": "allow", "ask": "--delete --delete-all"}, "closemedium": {"do": "allow",
                                                                                         "ask": "--delete"}}},
    "qm": {"fam": "container", "aka": "pct", "generic": True, "verbs": {"destroy": {"do": "ask"}}},
    "atlas": {"fam": "orm", "generic": True, "gvalued": "-u --url --env --dev-url",
        "verbs": {"schema clean": {"do": "ask"}, "migrate down": {"do": "ask"}}},
    "hanami": {"fam": "orm", "testenv": "HANAMI_ENV", "verbs": {"db drop": {"do": "ask"}, "db reset": {"do": "ask"},
        "db rollback": {"do": "ask"}}},
    "influx": {"fam": "store", "generic": True, "verbs": {}},
    "zkcli.sh": {"fam": "store", "aka": "zkcli zookeeper-shell zookeeper-shell.sh", "gvalued": "-server",
        "verbs": {"deleteall": {"do": "ask", "root": r"^/$"}, "rmr": {"do": "ask", "root": r"^/$"},
                  "delete": {"do": "ask"}}},
    "cdk": {"fam": "cloud", "verbs": {"destroy": {"do": "ask", "deny": "--all"}}},
    "serverless": {"fam": "cloud", "aka": "sls", "verbs": {"remove": {"do": "ask"}}},
}

SAFE: frozenset[str] = frozenset(
    "--help -h help --dry-run --dryrun --what-if --server-dry-run --preview --plan".split())
"""Options (and the word `help`) that make any management verb a no-op: allow."""
SAFE_PREFIXES = ("--dry-run=client", "--dry-run=server", "--dry-run=true", "--dryrun=true")

PROD = (r"(?:^|[^a-z0-9])(?:prod|production|prd|live)(?:$|[^a-z])")
"""A production target: the word part `prod`, `production`, `prd` or `live` (case-insensitive)."""
PROD_ENV: tuple[str, ...] = ("RAILS_ENV", "RACK_ENV", "NODE_ENV", "APP_ENV", "MIX_ENV", "FLASK_ENV",
                             "DJANGO_SETTINGS_MODULE", "ENVIRONMENT", "ENV", "STAGE", "KUBECONFIG",
                             "AWS_PROFILE", "CLOUDSDK_CORE_PROJECT", "PGHOST", "DATABASE_URL", "REDIS_URL")
"""Environment variables that name where a command acts."""

TEST_VALUE = r"^(?:test|testing)$"
"""The value of a `testenv` variable or `--env` that names the test database."""

RUNNERS: dict[str, tuple[str, ...]] = {
    # program -> first positionals that name a tool in MANAGEMENT run through it
    "yarn": ("prisma", "mikro-orm", "sequelize", "sequelize-cli", "knex", "typeorm", "drizzle-kit", "firebase",
             "vercel", "netlify", "supabase", "wrangler"),
    "pnpm": ("prisma", "mikro-orm", "sequelize", "sequelize-cli", "knex", "typeorm", "drizzle-kit", "firebase",
             "vercel", "netlify", "supabase", "wrangler"),
    "bun": ("prisma", "sequelize", "knex", "typeorm", "drizzle-kit"),
    "php": ("artisan", "bin/console", "console"), "dotnet": ("ef",), "sail": ("artisan",), "cargo": ("sqlx",),
    "python": ("manage.py",), "python3": ("manage.py",), "py": ("manage.py",),
}
"""Programs that run a management tool named by their first positional (`php artisan`, `python manage.py`)."""
# fmt: on
