"""Rules: destructive verbs of management CLIs, judged by scope (`guardian.management`).

Static rules: `management.on_invocation` fires them with the tool, verb and
scope as detail. The generic verb rules of `rules_cloud` (CLOUD-*, DB-*) still
ask on destructive verbs the table does not list.
"""

from __future__ import annotations

from tether.guardian.rules import static_rule

static_rule("MGMT-001", "cloud-destructive", "deny",
            "management CLI destroys at the widest scope or on production (every container or volume, "
            "all namespaces, a whole project, bucket or stack, a production-named target, no final backup)",
            "docker system prune -af --volumes")
static_rule("MGMT-002", "cloud-destructive", "ask",
            "management CLI deletes a named resource (an app, site, namespace, instance, release, stack) "
            "or every unused image",
            "heroku apps:destroy -a staging-app")
static_rule("MGMT-003", "database-destructive", "deny",
            "wipes every key, index or collection of a data store, or a production database",
            "redis-cli FLUSHALL")
static_rule("MGMT-004", "database-destructive", "ask",
            "deletes data in one database, store, bucket or volume, or resets or rolls back a database "
            "(ORM and framework database commands)",
            "npx prisma migrate reset")
