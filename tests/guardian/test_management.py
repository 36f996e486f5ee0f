"""Management CLIs judged by scope, wrapper forms and archivers that delete their inputs (issue 19, items 2-3)."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from tether.guardian import CheckContext, check, management
from tether.guardian.management_table import MANAGEMENT

CTX = CheckContext(workspace="/home/tether/project")
DENY = [
    "docker system prune -af --volumes", "podman volume prune -f", "docker rm -f $(docker ps -aq)",
    "docker ps -aq | xargs docker rm -f", "docker volume rm $(docker volume ls -q)",
    "kubectl delete pods --all -A", "kubectl --context prod-eu delete deploy api", "kubectl delete ns production",
    "helm uninstall api -n production", "terraform destroy -auto-approve", "terraform apply -destroy",
    "pulumi destroy --yes", "gcloud projects delete p-1 --quiet", "aws s3 rm s3://bucket --recursive",
    "aws s3 rb s3://bucket --force", "aws rds delete-db-instance --db-instance-identifier d --skip-final-snapshot",
    "firebase firestore:delete --all-collections", "firebase database:remove /", "redis-cli FLUSHALL",
    "redis-cli -n 2 flushdb", "redis-cli --scan | xargs redis-cli del", "redis-cli KEYS '*' | xargs redis-cli DEL",
    "curl -XDELETE localhost:9200/_all", "curl -X DELETE 'http://es:9200/logs-*'",
    "RAILS_ENV=production bin/rails db:drop", "DISABLE_DATABASE_ENVIRONMENT_CHECK=1 rails db:reset",
    "psql -h prod-db.internal -c 'DROP TABLE users'", "RAILS_ENV=test DATABASE_URL=postgres://prod/x rails db:drop",
    "heroku pg:reset -a shop-production",
    "docker compose -f docker-compose.prod.yml down -v",
    "podman rm -af", "helm uninstall $(helm list -q)", "kubectl delete ns kube-system", "az aks delete -n prod-aks",
    "redis-cli EVAL \"return redis.call('flushall')\" 0", "echo FLUSHALL | redis-cli", "http DELETE :9200/_all",
    "kubectl exec -it redis-0 -- redis-cli FLUSHALL", "supabase db reset --linked",
    "terraform state rm $(terraform state list)", "gcloud compute disks delete prod-disk",
    "etcdctl del '' --prefix", "mc rm -r --force local/bucket", "rclone purge remote:", "s3cmd del -r s3://bucket",
    "curl -X POST localhost:9200/logs/_delete_by_query -d '{\"query\":{\"match_all\":{}}}'",
    # wrappers
    "sem -j 4 rm -rf ~", "watchexec -e py 'rm -rf ~'", "lockrun --lockfile=/tmp/l -- rm -rf ~", "pixi run 'rm -rf ~'",
    "machinectl shell root@ /bin/rm -rf /", "devcontainer exec --workspace-folder . rm -rf ~",
    "parallel 'rm -rf {}' ::: ~", "parallel bash -c 'rm -rf {}' ::: /", "parallel -j4 --halt now,fail=1 rm -rf ::: ~ /",
    "ls | entr -s 'rm -rf ~'", "gosu root rm -rf /", "tini -- rm -rf /", "nix-shell --run 'rm -rf ~'",
    "concurrently 'npm start' 'rm -rf ~'", "direnv exec . rm -rf ~", "sbatch --wrap='rm -rf ~'",
    # archivers
    "tar czf /tmp/h.tgz ~ --remove-files", "zip -rm /tmp/h.zip ~", "7z a -sdel /tmp/x.7z /etc", "gzip -r ~",
    "xz /etc/passwd", "zstd --rm /etc/hosts", "rsync -a --remove-source-files ~/ /tmp/x/", "rar m /tmp/x.rar ~",
]
ASK = [
    "heroku apps:destroy -a staging-app", "docker system prune -a", "fly apps destroy my-api", "vercel remove my-site",
    "netlify sites:delete abc", "kubectl delete ns staging", "kubectl drain node-1", "docker volume rm pgdata",
    "docker compose down -v", "npx prisma migrate reset --force", "pnpm prisma db push --force-reset",
    "bundle exec rails db:reset", "python manage.py flush --noinput", "python3 manage.py migrate app zero",
    "./manage.py reset_db", "alembic downgrade base", "npx sequelize-cli db:drop", "npx knex migrate:rollback --all",
    "typeorm schema:drop", "php artisan migrate:fresh", "mix ecto.reset", "terraform state rm module.db",
    "terraform destroy -target=aws_instance.x", "redis-cli del session:1",
    "redis-cli --scan --pattern 'sess:*' | xargs redis-cli del", "gzip ~/notes.txt",
    "docker compose exec web bin/rails db:reset", "docker compose exec db psql -c 'DROP TABLE x'",
    "ssh bastion kubectl delete ns staging", "az aks delete -n dev", "cargo sqlx database drop",
    "tar cf /tmp/x.tar --remove-files -T list.txt", "rails runner 'User.delete_all'",
    "python manage.py shell -c 'from a.models import U; U.objects.all().delete()'", "etcdctl del /app/key",
    "echo 'User.delete_all' | rails runner -", "NODE_ENV=test npx prisma migrate reset --force",
]
ALLOW = [
    "docker ps", "docker system prune", "docker container prune -f", "xargs -n1 gzip < files.txt",
    "docker compose up -d", "docker image ls", "docker compose down", "docker image prune -f",
    "docker rm -f web", "kubectl get pods -A", "kubectl delete pod x --dry-run=client", "kubectl drain --help",
    "helm list", "terraform plan", "terraform plan -destroy", "terraform apply", "terraform apply -auto-approve",
    "rails db:migrate", "python manage.py migrate", "prisma generate", "prisma db push", "redis-cli ping",
    "aws s3 ls", "aws s3 rm s3://b/x --dryrun", "parallel gzip ::: *.log", "tar czf out.tgz src/",
    "zip -r site.zip dist/", "parallel 'echo {} >> out.txt' ::: a b", "parallel echo {1} {2} ::: a b :::+ c d",
    "ls src/*.py | entr -c pytest -q", "nix develop -c pytest", "gzip logs/app.log", "gzip -k /etc/x.conf",
    "tar --remove-files -czf logs.tgz logs/old", "concurrently -n a,b 'npm run a' 'npm run b'",
    "docker ps -aq -f status=exited | xargs docker rm", "heroku logs -a prod-app", "kubectl get ns kube-system",
    "sem --id x -j2 make", "watchexec -e py -- pytest -q", "pixi run test", "ssh host 'rm -rf build'",
    "RAILS_ENV=test bin/rails db:drop db:create db:schema:load", "MIX_ENV=test mix ecto.reset",
    "npx knex migrate:rollback --all --env test", "rails runner 'puts User.count'",
    "python manage.py shell -c 'print(1)'",
]


@pytest.mark.parametrize("command", DENY)
def test_widest_scope_production_and_wrapped_destruction_deny(command: str) -> None:
    v = check(command, CTX)
    assert v.decision == "deny", (command, v.rules, v.reason)


@pytest.mark.parametrize("command", ASK)
def test_one_named_resource_or_dev_database_asks(command: str) -> None:
    v = check(command, CTX)
    assert v.decision == "ask", (command, v.rules, v.reason)


@pytest.mark.parametrize("command", ALLOW)
def test_reads_dry_runs_and_ordinary_work_allow(command: str) -> None:
    v = check(command, CTX)
    assert v.decision == "allow", (command, v.rules, v.reason)


def test_parallel_items_stay_data() -> None:
    """A shell template's items are quoted by parallel: an item is never run as code."""
    v = check("parallel 'echo {}' ::: 'rm -rf ~'", CTX)
    assert v.decision == "allow", v.reason
    assert check("cat list | parallel sh -c {}", CTX).decision == "ask"


def test_every_tool_has_a_family_and_known_decisions() -> None:
    seen: set[str] = set()
    for name, e in MANAGEMENT.items():
        assert e["fam"] in {"container", "orchestrator", "paas", "orm", "store", "cloud"}, name
        for n in [name, *e.get("aka", "").split()]:
            assert n not in seen, n
            seen.add(n)
        for verb, v in e["verbs"].items():
            assert v["do"] in ("allow", "ask", "deny"), (name, verb)
            assert set(v) <= {"do", "cat", "ask", "deny", "need", "narrow", "text", "mass", "root", "rootneed", "zero",
                              "denyenv", "rootbare", "local", "localmax", "onepod", "redo"}, (name, verb)


def test_docs_show_the_current_management_table() -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "guardian.md").read_text()
    block = doc.split("<!-- management-coverage -->\n", 1)[1].split("\n<!-- /management-coverage -->")[0]
    assert block.strip() == management.coverage_markdown().strip(), "run python -m tether.guardian.management"


NESTED_INNER = [
    'docker system prune -af --volumes', 'redis-cli FLUSHALL', 'terraform destroy -auto-approve',
    'kubectl delete ns --all', 'rm -rf ~', 'gzip -r ~', 'python manage.py flush --noinput',
    'heroku apps:destroy -a x',
]
WRAPPER_FORMS = [
    'timeout 60 {c}', 'nice -n 5 {c}', 'ionice -c3 {c}', 'chrt -f 1 {c}', 'taskset -c 0 {c}', 'stdbuf -oL {c}',
    'nohup {c}', 'setsid {c}', 'unbuffer {c}', 'script -qc {q} /dev/null', 'su -c {q}', 'sudo -u root {c}',
    'runuser -u root -- {c}', 'doas {c}', 'echo x | xargs -I{{}} sh -c {q}', 'env -S {q}', 'busybox sh -c {q}',
    'dbus-run-session -- {c}', 'systemd-run --user {c}', 'echo {q} | at now', 'tmux new -d {q}', 'screen -dm {c}',
    'parallel {q} ::: x', 'parallel -j2 --halt now,fail=1 ::: {q}', 'ls | entr -s {q}', 'ls | entr -r {c}',
    'watch -n1 {q}', 'flock /tmp/l {c}', 'flock /tmp/l -c {q}', 'gosu root {c}', 'tini -- {c}',
    'nix-shell --run {q}', 'direnv exec . {c}', 'concurrently {q}', 'sem -j2 {c}', 'watchexec {q}', 'bash -c {q}',
    'find . -maxdepth 0 -execdir sh -c {q} \\;', 'docker exec c {c}', 'kubectl exec p -- {c}', 'ssh host {q}',
    'npx -c {q}', 'poetry run {c}', 'uv run {c}', 'bundle exec {c}', 'xargs -a /dev/null {c}', 'time {c}',
    'command {c}', 'exec {c}', 'eval {q}', 'strace -f {c}', 'fakeroot {c}', 'sudo -E env X=1 {c}',
    'nohup sh -c {q} &', 'caffeinate -i {c}', 'pueue add -- {c}', 'op run -- {c}', 'mise exec -- {c}',
]


@pytest.mark.parametrize("form", WRAPPER_FORMS)
def test_destruction_inside_every_wrapper_form_is_never_allowed(form: str) -> None:
    """Each destructive command nested in each wrapper form (options, quoting, stdin) asks or denies."""
    for inner in NESTED_INNER:
        command = form.format(c=inner, q=shlex.quote(inner))
        v = check(command, CTX)
        assert v.decision != "allow", (command, v.reason)


# outer forms that hand their text on as words, not as a shell line (env -S has no pipes; pueue joins
# its arguments, dropping their quotes), are left out of the nesting below: what they run differs
_JOINING = ("env -S {q}", "pueue add -- {c}")


def test_two_wrapper_forms_nested_are_never_allowed() -> None:
    """Pairs of wrapper forms around each destructive command (a fixed sample) ask or deny."""
    import random

    rng = random.Random(19)
    outer = [f for f in WRAPPER_FORMS if f not in _JOINING]
    for _ in range(300):
        command = rng.choice(NESTED_INNER)
        for form in (rng.choice(WRAPPER_FORMS), rng.choice(outer)):
            command = form.format(c=command, q=shlex.quote(command))
        v = check(command, CTX)
        assert v.decision != "allow", (command, v.reason)


@pytest.mark.parametrize(("command", "decision"), [
    # heroku run: one word is a shell line on a one-off dyno, several an argv; options anywhere before it
    ("heroku run -a myapp python manage.py flush --noinput", "ask"), ("heroku run:detached rails db:reset", "ask"),
    ("heroku run --app myapp \"rails runner 'User.delete_all'\"", "ask"),
    ("heroku run -a myapp -- npx prisma migrate reset --force", "ask"),
    ("heroku run -s standard-2x -a myapp rails db:seed:replant", "ask"),
    ("heroku run -a myapp psql $DATABASE_URL -c 'DROP TABLE users'", "ask"),
    ("heroku run -a shop-production rails db:reset", "deny"), ("heroku run -e RAILS_ENV=x rake db:drop", "ask"),
    ("heroku pg:psql -a myapp -c 'DROP DATABASE x'", "ask"), ("heroku pg:psql --command 'TRUNCATE users'", "ask"),
    ("heroku pg:backups:restore b101 DATABASE_URL -a myapp", "ask"), ("heroku pg:copy a::DATABASE DATABASE_URL", "ask"),
    ("heroku pg:reset DATABASE_URL --confirm myapp", "ask"),
    ("heroku run -a myapp rails db:migrate", "allow"), ("heroku run bash -a myapp", "allow"),
    ("heroku run -a myapp python manage.py migrate", "allow"), ("heroku pg:psql -a myapp -c 'select 1'", "allow"),
    ("heroku logs --tail -a myapp", "allow"),
    # consul: a recursive delete with no key, "" or / is the whole store
    ("consul kv delete -recurse", "deny"), ("consul kv delete -recurse /", "deny"),
    ("consul kv delete -recurse=true ''", "deny"), ("consul kv delete -token abc -recurse", "deny"),
    ("consul kv delete -http-addr=https://c:8501 --recurse", "deny"),
    ("consul kv delete -recurse app/", "ask"), ("consul kv delete app/x", "ask"),
    ("consul snapshot restore b.snap", "ask"),
    ("consul kv get -recurse app/", "allow"), ("consul kv put app/x 1", "allow"), ("consul members", "allow"),
])
def test_heroku_run_pg_and_consul_kv(command: str, decision: str) -> None:
    v = check(command, CTX)
    assert v.decision == decision, (command, v.rules)
