"""DATA: where secrets come from, where they can leave, and the host-escape paths.

Read by `guardian.secrets_flow` (sources, sinks and the flow between them) and
`guardian.rules_escape` (container and host escape). A literal module, like
`guardian.programs_table`, so the guard imports it from bytecode. Facts are
public (the tools' own docs, MITRE ATT&CK T1552/T1555/T1048, HackTricks'
container pages); the table is written for this project.

Sources:
    ENV_DUMPS: program -> how it dumps the whole environment: "bare" (no
        operand: `printenv`, `env`), "opts:LETTERS" (`export -p`, `declare -x`;
        no operand or only those options), "code" (a filter language whose
        program, an operand, names the whole environment: `jq -n env`,
        `jq -n '$ENV'`; ENV_CODE is that pattern), "print:LETTERS" (prints
        unless one of those options: `history`), "with:LETTERS" (prints with
        one of them: `fc -l`).
    TOKEN_COMMANDS: program -> `sub`: subcommand prefixes (space separated
        words, `|` between them; "*" any; `secret/*` a word by prefix, `~` a
        word whose name says secret (SECRET_WORD), `$` no more words, `-t` an
        option given, `!-q` an option absent) that print a token, password or key
        (reading one asks, CRED-005); `store`: reads of a secret manager the
        project configured (`vault kv get`, `aws secretsmanager
        get-secret-value`, `op item get`): ordinary alone, a source when sent;
        `owner`: hosts the token is meant for (sending it there is ordinary).
    SECRET_DIRS: folders that hold credentials (the home, ~/.ssh, ~/.aws, ...):
        archived, copied or sent whole, they are a source.
    STORE_PATHS: regex over resolved paths of credential stores beyond the
        files of CRED-001..004 (browsers, keyrings, password stores, tool
        tokens, mounted service-account secrets).
    DOTENV: regex over a file name that holds secrets when outside the
        workspace (`.env`, `.env.production`); TEMPLATES are not secret.
Sinks:
    NET_SINKS: program -> how it carries data out: "http" (data options,
        `@file`, stdin), "socket" (stdin, redirects), "copy" (local sources
        to a `host:` destination), "shell" (stdin and remote command), "dns"
        (the queried name), "mail" (stdin, body files), "cloud" (an upload to a
        bucket, a gist or a release: `aws s3 cp F s3://..`, `gsutil cp`,
        `gh gist create F`; UPLOADS says which words are the files).
    MESSAGES: message and value senders (`gh issue comment -b`, `aws sns
        publish --message`, `psql -h remote -c`, `mosquitto_pub -m`): see below.
    UPLOADS: program -> subcommand words (`|` between prefixes) -> how its
        local inputs are named: "to:PREFIXES" (the operands before the first
        remote URL with one of those prefixes: `aws s3 sync DIR s3://b`),
        "opt:OPTIONS" (the values of those options: `az storage blob upload
        -f F`), "all" (every operand; stdin when none: `gh gist create`),
        "after:N" (operands from the N-th on: `gh release upload TAG F..`),
        "backup:OPTIONS" (operands; a sink unless that repository option names
        a local folder: `restic -r R backup DIR`), "borg" (`borg create
        REPO::A PATHS`, a sink when REPO is remote), "image" (`docker push
        TAG`: the image a `docker build` of a context holding secrets made).
    CONFIG_OPTS: program -> options naming a file of more options
        (`curl -K cfg`): read when written in the line, else the line asks.
    BUILDERS: programs whose `build` subcommand packs a context folder into an
        image named by -t/--tag (what `docker push` then sends).
    HTTP_DATA: option -> "value" (literal data) | "file" (a file or `-`).
Other:
    METADATA: regex of cloud instance-metadata hosts; METADATA_SECRET: the
        paths there that hand out credentials or user data.
    QUIET: programs whose output reveals nothing of what they read (hashes,
        counts, listings), so a secret piped through them stops.
    HOST_ESCAPE: regex over resolved paths that reach the host from a
        container (another process's root or cwd, sysrq).
    FS_DEBUGGERS: programs that read or write a file system on a raw device,
        bypassing permissions; DEVICE_INFO: device tools that only report.
    POD_ESCAPE: regex over a pod spec (`--overrides` JSON, a manifest on
        stdin or written in the line) that grants host access.
"""

# fmt: off
ENV_DUMPS: dict[str, str] = {
    "env": "bare", "printenv": "bare", "set": "bare", "export": "opts:p", "declare": "opts:xpg",
    "typeset": "opts:xpg", "compgen": "opts:ve", "jq": "code", "gojq": "code", "jaq": "code", "yq": "code",
    # the shell's history holds every token typed on a command line: `history` prints it unless an option
    # edits it (`-c`, `-d`, `-w`...); `fc -l` lists it
    "history": "print:cdwarsn", "fc": "with:l",
}
ENV_CODE: str = r"(?:^|[^\w.$])(?:\$ENV|env|envs)\b(?!\s*[.\[(])"

_COMPOSE_CONFIG = "compose config !-q !--quiet !--services !--volumes !--images !--profiles !--hash"
"""`docker compose config` prints the file with every `${SECRET}` of the environment expanded (not with
those options)."""

SECRET_WORD: str = r"(?i)secret|token|passw|private|credential|auth(?!or)|api_?key|access_?key"
"""A setting or output whose name says it is a secret (`aws configure get aws_secret_access_key`, `npm config get
//registry.npmjs.org/:_authToken`, `terraform output db_password`): the `~` word of TOKEN_COMMANDS."""

TOKEN_COMMANDS: dict[str, dict[str, str]] = {
    "gh": {"sub": "auth token|auth status -t|auth status --show-token",
           "owner": "github.com githubusercontent.com ghcr.io"},
    "glab": {"sub": "auth token|config get token", "owner": "gitlab.com"},
    "aws": {"sub": "configure export-credentials|sts get-session-token|sts assume-role|"
            "ecr get-login-password|ecr-public get-login-password|codeartifact get-authorization-token|"
            "iam create-access-key|sso get-role-credentials|sts get-federation-token|configure get ~",
            "store": "secretsmanager get-secret-value|ssm get-parameter|ssm get-parameters",
            "owner": "amazonaws.com amazonaws.com.cn aws.amazon.com"},
    "gcloud": {"sub": "auth print-access-token|auth print-identity-token|auth application-default print-access-token|"
               "iam service-accounts keys create|container clusters get-credentials|config config-helper",
               "store": "secrets versions access", "owner": "googleapis.com google.com gcr.io pkg.dev"},
    "az": {"sub": "account get-access-token|acr login|ad sp create-for-rbac|storage account keys list",
           "store": "keyvault secret show|keyvault secret download",
           "owner": "azure.com microsoft.com windows.net azurecr.io azure.net"},
    "git": {"sub": "credential fill|credential-cache get|credential-store get", "owner": ""},
    "git-credential-store": {"sub": "get", "owner": ""},
    "git-credential-cache": {"sub": "get", "owner": ""},
    "git-credential-osxkeychain": {"sub": "get", "owner": ""},
    "git-credential-libsecret": {"sub": "get", "owner": ""},
    "git-credential-manager": {"sub": "get", "owner": ""},
    "security": {"sub": "find-generic-password|find-internet-password|dump-keychain|export|find-certificate",
                 "owner": ""},
    "secret-tool": {"sub": "lookup|search", "owner": ""},
    "keyring": {"sub": "get", "owner": ""},
    "pass": {"sub": "show|*", "owner": ""},
    "gopass": {"sub": "show|cat|*", "owner": ""},
    "lpass": {"sub": "show", "owner": ""},
    "bw": {"sub": "get|export|list", "owner": ""},
    "op": {"sub": "", "store": "read|item get|document get|inject", "owner": ""},
    "vault": {"sub": "print token|token create", "store": "read|kv get|token lookup|login", "owner": ""},
    "kubectl": {"sub": "config view --raw|create token", "store": "get secret -o|get secrets -o|get secret/* -o|"
                "get secrets/* -o", "owner": ""},
    "oc": {"sub": "whoami -t|whoami --show-token|config view --raw|create token",
           "store": "get secret -o|get secrets -o|get secret/* -o|get secrets/* -o|extract secret/*", "owner": ""},
    "docker-credential-desktop": {"sub": "get|list", "owner": ""},
    "docker-credential-pass": {"sub": "get|list", "owner": ""},
    "docker-credential-secretservice": {"sub": "get|list", "owner": ""},
    "docker-credential-osxkeychain": {"sub": "get|list", "owner": ""},
    "docker-credential-ecr-login": {"sub": "get|list", "owner": ""},
    "docker-credential-gcloud": {"sub": "get", "owner": ""},
    "heroku": {"sub": "auth:token|authorizations:create", "store": "config|config:get", "owner": "heroku.com"},
    "docker": {"sub": "", "store": "inspect|container inspect|" + _COMPOSE_CONFIG, "owner": ""},
    "podman": {"sub": "", "store": "inspect|container inspect|" + _COMPOSE_CONFIG, "owner": ""},
    "docker-compose": {"sub": "", "store": _COMPOSE_CONFIG[8:], "owner": ""},
    "podman-compose": {"sub": "", "store": _COMPOSE_CONFIG[8:], "owner": ""},
    "doctl": {"sub": "auth token", "owner": "digitalocean.com"},
    "npm": {"sub": "token create|config get ~|get ~", "owner": "npmjs.org npmjs.com"},
    "pnpm": {"sub": "config get ~", "owner": "npmjs.org npmjs.com"},
    "yarn": {"sub": "config get ~", "owner": "npmjs.org npmjs.com yarnpkg.com"},
    "terraform": {"sub": "output ~", "store": "output -raw|output -json", "owner": ""},
    "tofu": {"sub": "output ~", "store": "output -raw|output -json", "owner": ""},
    "terragrunt": {"sub": "output ~", "store": "output -raw|output -json", "owner": ""},
    "pulumi": {"sub": "stack output --show-secrets|config --show-secrets|stack export --show-secrets|"
               "config get ~", "owner": ""},
    "sops": {"sub": "-d|--decrypt|decrypt|exec-env|exec-file", "owner": ""},
    "ansible-vault": {"sub": "view|decrypt", "owner": ""},
    "age": {"sub": "-d|--decrypt", "owner": ""},
    "rage": {"sub": "-d|--decrypt", "owner": ""},
    "doppler": {"sub": "", "store": "secrets download|secrets get|secrets $|run -- env|run -- printenv",
                "owner": "doppler.com"},
    "infisical": {"sub": "", "store": "export|secrets get|secrets $|run -- env|run -- printenv",
                  "owner": "infisical.com"},
    "chamber": {"sub": "", "store": "export|read|env", "owner": ""},
    "etcdctl": {"sub": "", "store": "get", "owner": ""},
    "helm": {"sub": "", "store": "get values|get all|get manifest", "owner": ""},
    "keyctl": {"sub": "print|pipe|read", "owner": ""},
    "gpg": {"sub": "--export-secret-keys|--export-secret-subkeys", "owner": ""},
    "gpg2": {"sub": "--export-secret-keys|--export-secret-subkeys", "owner": ""},
    "kwallet-query": {"sub": "*", "owner": ""},
    "gnome-keyring-daemon": {"sub": "--unlock", "owner": ""},
}

STORE_PATHS: str = (
    r"(?:^(?:/home/[^/]+|/root|/Users/[^/]+)/(?:"
    r"\.config/(?:google-chrome|chromium|BraveSoftware/[^/]+|microsoft-edge|vivaldi|opera)/"
    r"(?:[^/]+/)?(?:Login Data|Cookies|Web Data|Local State|Network/Cookies)|"
    r"\.mozilla/firefox/[^/]+/(?:logins\.json|key[34]\.db|cookies\.sqlite|signons\.sqlite|cert9\.db)|"
    r"snap/firefox/common/\.mozilla/firefox/[^/]+/(?:logins\.json|key[34]\.db|cookies\.sqlite)|"
    r"Library/(?:Application Support/(?:Google/Chrome|BraveSoftware/[^/]+|Microsoft Edge|Firefox/Profiles)/|"
    r"Keychains/|Cookies/)|"
    r"\.local/share/keyrings/|\.password-store/|\.gnupg/|\.config/(?:hub|op/|gcloud/|rclone/rclone\.conf|"
    r"configstore/|Code/User/globalStorage/|github-copilot/)|"
    r"\.cargo/credentials|\.gem/credentials|\.s3cfg|\.boto|\.terraformrc|\.config/helm/|"
    r"\.oci/|\.gradle/gradle\.properties|\.m2/settings(?:-security)?\.xml|\.yarnrc\.yml|"
    r"\.config/gh/|\.cf/config\.json|\.config/doctl/|\.config/heroku|"
    r"\.databrickscfg$|\.snowsql/config$|\.dbt/profiles\.yml$|\.fly/config\.yml$|\.config/netlify/|"
    r"\.mc/config\.json$|\.wrangler/config/|\.ngrok2/|\.config/ngrok/|\.nuget/NuGet/NuGet\.Config$|"
    r"\.config/stripe/|\.config/pulumi/credentials|\.pulumi/credentials|"
    r"\.ssh/(?![^/]*\.pub$|known_hosts|authorized_keys|config$|environment$|rc$)[^/]+$|\.aws/(?:sso|cli)/cache(?:/|$)|"
    r"\.config/(?:doppler|infisical|sops/age)/|\.vault-token$|\.ansible/vault|\.age/|"
    r"\.(?:bash|zsh|sh|python|psql|mysql|node_repl|sqlite|rediscli)_history$|\.zhistory$|"
    r"\.local/share/fish/fish_history$))|"
    r"^/var/run/secrets/|^/run/secrets/|^/etc/(?:ssl/private/|kubernetes/(?:admin|kubelet)\.conf|wireguard(?:/|$)|"
    r"NetworkManager/system-connections(?:/|$)|ipsec\.secrets$|ppp/(?:chap|pap)-secrets$|"
    r"kubernetes/pki/|rancher/k3s/k3s\.yaml)|^/var/lib/kubelet/pki/|^/proc/[^/]+/environ$"
)

SECRET_DIRS: str = (r"^(?:/home/[^/]+|/root|/Users/[^/]+)(?:/\.(?:ssh|aws|kube|gnupg|docker|azure|"
                    r"password-store|mozilla|config(?:/(?:gcloud|google-chrome|chromium|gh|op|hub))?|"
                    r"local/share/keyrings))?/?$|^/(?:etc(?:/ssh)?|home|root)?/?$|^/var/run/secrets(?:/|$)|"
                    r"^/run/secrets(?:/|$)")

DOTENV: str = r"(?:^|/)\.env(?:\.[\w.-]+)?$|(?:^|/)[\w.-]+\.env$"
TEMPLATES: str = r"(?:example|sample|template|dist|defaults?|tpl|schema)(?:\.|$)"
SECRET_VAR: str = (r"(?i)(?:^|_)(?:SECRET(?:_ACCESS)?_KEY|SECRET|TOKEN|PASSWORD|PASSWD|PASS|PASSPHRASE|API_?KEY|"
                   r"ACCESS_?KEY(?:_ID)?|PRIVATE_?KEY|CREDENTIALS?|AUTH_?KEY|SIGNING_?KEY|PAT)(?:_(?:B64|BASE64|VALUE))?$")
"""A variable whose name says it holds a secret (`AWS_SECRET_ACCESS_KEY`, `GITHUB_TOKEN`, `DB_PASSWORD`)."""

SECRET_NAMED: str = (r"(?i)^(?:secrets?|credentials?|service[-_]?account[\w.-]*|client[-_]secrets?[\w.-]*|"
                     r"[\w.-]*[-_]key|token|auth)\.(?:json|ya?ml|toml|txt|ini|pem)$|\.(?:key|p12|pfx|jks|keystore)$|"
                     r"^(?:privkey|private[-_]?key)[\w.-]*$|^id_(?:rsa|ed25519|ecdsa|dsa)$")
"""A workspace file whose name says it holds a secret (`secrets.json`, `service-account.json`,
`server.key`): sent to another host as it is, the line asks (EXFIL-007)."""

NET_SINKS: dict[str, str] = {
    "curl": "http", "wget": "http", "http": "http", "https": "http", "xh": "http", "xhs": "http",
    "curlie": "http", "httpie": "http", "aria2c": "http", "lwp-request": "http", "POST": "http", "PUT": "http",
    "nc": "socket", "ncat": "socket", "netcat": "socket", "nc.traditional": "socket", "nc.openbsd": "socket",
    "socat": "socket", "telnet": "socket", "openssl": "socket", "cryptcat": "socket", "sbd": "socket",
    "ssh": "shell", "scp": "copy", "sftp": "copy", "rsync": "copy", "rclone": "copy", "smbclient": "copy",
    "ftp": "copy", "lftp": "copy", "tftp": "copy", "dig": "dns", "nslookup": "dns", "host": "dns",
    "drill": "dns", "delv": "dns", "whois": "dns", "getent": "dns", "resolvectl": "dns", "kdig": "dns",
    "ping": "dns", "ping6": "dns", "traceroute": "dns",
    "sendmail": "mail", "mail": "mail", "mailx": "mail", "mutt": "mail", "msmtp": "mail", "swaks": "mail",
    "git": "git", "aws": "cloud", "gsutil": "cloud", "gcloud": "cloud", "gh": "cloud", "az": "cloud",
    "azcopy": "cloud", "restic": "cloud", "borg": "cloud", "svn": "cloud", "docker": "cloud", "podman": "cloud",
    "buildah": "cloud", "s3cmd": "cloud", "mc": "cloud", "b2": "cloud", "oras": "cloud", "glab": "cloud",
}

UPLOADS: dict[str, dict[str, str]] = {
    "aws": {"s3 cp|s3 mv|s3 sync": "to:s3://"},
    "gsutil": {"cp|mv|rsync": "to:gs://"},
    "gcloud": {"storage cp|storage mv|storage rsync|alpha storage cp|alpha storage rsync": "to:gs://"},
    "az": {"storage blob upload|storage file upload|storage fs file upload": "opt:-f --file",
           "storage blob upload-batch|storage file upload-batch|storage blob sync|storage fs directory upload":
           "opt:-s --source"},
    "azcopy": {"copy|cp|sync": "to:https://"},
    "s3cmd": {"put|sync": "to:s3://"}, "mc": {"cp|mirror": "to:"}, "b2": {"upload-file|sync": "to:b2://"},
    "gh": {"gist create": "all", "release upload": "after:1"},
    "restic": {"backup": "backup:-r --repo"},
    "borg": {"create": "borg"},
    "svn": {"import": "to:http:// https:// svn:// svn+ssh://", "commit|ci": "all"},
    "docker": {"push|image push": "image"}, "podman": {"push|image push": "image"}, "buildah": {"push": "image"},
    "oras": {"push": "after:1"},
}

MESSAGES: dict[str, dict[str, str]] = {
    "gh": {"issue comment|pr comment|issue create|pr create|pr review|issue edit|pr edit|discussion create|"
           "release create|release edit": "opt:-b,--body,-n,--notes file:-F,--body-file,--notes-file",
           "api": "field:-f,--raw-field,-F,--field file:--input",
           "secret set": "opt:-b,--body stdin setter", "variable set": "opt:-b,--body stdin"},
    "glab": {"issue note|mr note|issue create|mr create|issue comment|mr comment|release create":
             "opt:-m,--message,-d,--description,-N,--notes file:-F,--notes-file",
             "api": "field:-f,--raw-field,-F,--field file:--input",
             "variable set|variable update": "pos:1 opt:-v,--value stdin setter",
             "snippet create": "pos:0 file:-f,--filename"},
    "aws": {"sns publish": "opt:--message", "sqs send-message": "opt:--message-body",
            "sqs send-message-batch|events put-events": "opt:--entries", "kinesis put-record": "opt:--data",
            "kinesis put-records": "opt:--records", "firehose put-record|firehose put-record-batch":
            "opt:--record,--records", "logs put-log-events": "opt:--log-events",
            "ses send-email": "opt:--message,--text,--html", "sesv2 send-email": "opt:--content",
            "lambda invoke": "opt:--payload", "iot-data publish": "opt:--payload", "s3api put-object": "file:--body"},
    "gcloud": {"logging write": "pos:1", "pubsub topics publish": "opt:--message,--attribute",
               "functions call": "opt:--data", "tasks create-http-task": "opt:--body-content file:--body-file"},
    "psql": {"": "opt:-c,--command file:-f,--file stdin host:-h,--host,url skip:-U,--username,-d,--dbname,-p,--port"},
    "mysql": {"": "opt:-e,--execute stdin host:-h,--host skip:-u,--user,-P,--port,-D,--database"},
    "mariadb": {"": "opt:-e,--execute stdin host:-h,--host skip:-u,--user,-P,--port,-D,--database"},
    "redis-cli": {"": "pos:0 stdin:-x host:-h,-u,url skip:-a,-p,-n,--user,--pass,--cacert,--cert,--key"},
    "valkey-cli": {"": "pos:0 stdin:-x host:-h,-u,url skip:-a,-p,-n,--user,--pass,--cacert,--cert,--key"},
    "mongosh": {"": "opt:--eval stdin host:--host,url skip:-u,--username,-p,--password"},
    "mongo": {"": "opt:--eval stdin host:--host,url skip:-u,--username,-p,--password"},
    "nats": {"pub|publish|req|request": "pos:1 stdin host:-s,--server skip:--creds,--user,--password,--nkey,--count"},
    "grpcurl": {"": "opt:-d stdin host:addr skip:-H,-rpc-header,-import-path,-proto,-cacert,-cert,-key"},
    "mosquitto_pub": {"": "opt:-m,--message file:-f,--file stdin host:-h,--host,-L,--url "
                      "skip:-t,--topic,-u,--username,-P,--pw,-p,--port,-i,--id,--cafile,--cert,--key"},
    "kcat": {"": "stdin host:-b"}, "kafkacat": {"": "stdin host:-b"},
    "kafka-console-producer": {"": "stdin host:--bootstrap-server,--broker-list"},
    "kafka-console-producer.sh": {"": "stdin host:--bootstrap-server,--broker-list"},
}
"""Tools that send a message or a value to a service (an issue comment, a queue, a log, a database, a broker):
program -> subcommand prefixes (`|` between; "" none) -> what they send: `opt:` options whose value is the message
(`file://F` names a file), `file:` options naming a file (`-`: stdin), `field:` `key=value` options (`key=@F` a
file), `pos:N` operands from the N-th after the subcommand, `stdin` (when nothing else is given, or with one of
`stdin:OPTIONS`); `host:` the options (`url`: an operand with
`://`; `addr`: the first `host:port` operand) naming the server: a sink only when one is given and is not this
machine; `skip:` other options that take a value (a login, a port, a topic); `setter`: a CI secret set in the
current repository (no -R/--repo/--org/--group), where a lone secret-named variable is being stored for use
(`gh secret set NPM_TOKEN -b "$NPM_TOKEN"`) and anything more is a leak (a `gh variable` is plain text to every
reader of the repository: never a setter)."""

CONFIG_OPTS: dict[str, str] = {"curl": "-K --config", "wget": "--config", "aria2c": "--conf-path"}
BUILDERS: frozenset[str] = frozenset({"docker", "podman", "buildah", "nerdctl", "kaniko"})

HTTP_DATA: dict[str, str] = {
    "-d": "value", "--data": "value", "--data-raw": "value", "--data-binary": "value",
    "--data-urlencode": "value", "--data-ascii": "value", "--json": "value", "-F": "value", "--form": "value",
    "--form-string": "value", "-H": "value", "--header": "value", "-u": "value", "--user": "value",
    "-b": "value", "--cookie": "value", "-A": "value", "--user-agent": "value", "-e": "value",
    "--referer": "value", "--url-query": "value", "-T": "file", "--upload-file": "file",
    "--post-data": "value", "--body-data": "value", "--post-file": "file", "--body-file": "file",
    "--raw": "value",
}

LOCAL_HOST: str = r"^(?:[a-z][\w+.-]*://)?(?:[^@/]*@)?(?:localhost|127\.\d+\.\d+\.\d+|\[?::1\]?|0\.0\.0\.0)(?:[:/]|$)"

METADATA: str = (r"(?i)(?:^|[/@\s\"'=(])(?:169\.254\.169\.254|169\.254\.170\.2|169\.254\.169\.123|"
                 r"instance-data(?:\.ec2\.internal)?|metadata(?=/computeMetadata)|"
                 r"169\.254\.169\.254\.(?:nip|sslip|xip)\.io|a9fea9fe\.nip\.io|169\.254\.43518|"
                 r"\[?::ffff:(?:a9fe:a9fe|169\.254\.169\.254)\]?|0xa9\.0xfe\.0xa9\.0xfe|"
                 r"\[?fd00:ec2::254\]?|metadata\.google\.internal|metadata\.goog|metadata\.azure\.com|"
                 r"100\.100\.100\.200|192\.0\.0\.192|metadata\.tencentyun\.com|"
                 r"0xa9fea9fe|2852039166|0251\.0376\.0251\.0376)(?:[:/\s\"'),\x00]|$)")
METADATA_SECRET: str = (r"security-credentials|/token|identity|service-accounts|user-data|"
                        r"169\.254\.170\.2|api/token|/keys|password|secret|attributes/|recursive=true|credentials")

QUIET: frozenset[str] = frozenset("""
wc md5sum sha1sum sha224sum sha256sum sha384sum sha512sum b2sum cksum sum ls stat test [ [[ true false
du file touch mkdir chmod chown ssh-add ssh-keygen readlink realpath basename dirname rm : sleep
""".split())

HOST_ESCAPE: str = (r"^/proc/(?:\d+|[*?\[][^/]*|\$[^/]*|\x00[^/]*)/(?:root|cwd)(?:/|$)|"
                    r"^/proc/sysrq-trigger$")

FS_DEBUGGERS: frozenset[str] = frozenset("""
debugfs xfs_db xfs_io e2image fsdb icat fls istat ifind ffind blkcat blkls jcat jls ntfscat ntfsls
ntfsfix ntfsclone zdb btrfs-select-super dumpe2fs e2fsck fsck fsck.ext4 fsck.ext3 fsck.ext2 fsck.xfs
xfs_repair tune2fs resize2fs debugreiserfs partclone.ext4 ext4magic extundelete photorec testdisk
""".split())
DEVICE_INFO: frozenset[str] = frozenset("""
lsblk blkid findmnt df fdisk sfdisk parted smartctl hdparm udevadm lsof stat ls file test [ [[ mount readlink realpath
umount losetup cryptsetup pvs lvs vgs pvdisplay lvdisplay vgdisplay nvme mdadm dmsetup
""".split())
BLOCK_DEVICE: str = r"^/dev/(?:sd[a-z]|hd[a-z]|vd[a-z]|xvd[a-z]|nvme\d|mmcblk\d|disk\d|disk/|rdisk\d|md\d|dm-\d|" \
                    r"mapper/|" \
                    r"loop\d|root$|mem$|kmem$|port$)"

PROC_SECRET: str = r"^/proc/[^/]*\x00[^/]*/(?:environ|mem|maps)$"
"""Another process's environment or memory, its pid known only at run time (`/proc/$(pgrep x)/environ`)."""
REMOTE_EXEC: dict[str, str] = {"kubectl": "--", "oc": "--", "docker": "exec", "podman": "exec", "nerdctl": "exec",
                               "ssh": "host"}
"""Programs that run a command elsewhere and print its output here: its secrets are sources too."""

POD_ESCAPE: str = (r"[\"']?(?:hostPID|hostNetwork|hostIPC|privileged|allowPrivilegeEscalation)[\"']?\s*:\s*"
                   r"[\"']?true|[\"']?hostPath[\"']?\s*:|[\"']?add[\"']?\s*:\s*\[?[^\]\n]*"
                   r"(?:SYS_ADMIN|ALL|SYS_PTRACE|SYS_MODULE)|nsenter|(?i:badPods|everything-allowed|"
                   r"priv-and-hostpid|hostpid-exec|hostnetwork-exec|hostpath-exec)")
KUBE_PROGS: frozenset[str] = frozenset({"kubectl", "oc", "microk8s.kubectl", "k3s", "kubecolor"})
COMPOSE_ESCAPE: str = (r"(?m)(?:^|[{,])\s*[\"']?(?:privileged[\"']?\s*:\s*[\"']?true|"
                       r"(?:pid|ipc|uts|userns_mode|network_mode|cgroup)[\"']?\s*:\s*[\"']?host\b)|(?:apparmor|seccomp|label)[:=]unconfined|"
                       r"cap_add[\"']?\s*:[^\n]*(?:\n\s*-[^\n]*)*?(?:SYS_ADMIN|\bALL\b|SYS_PTRACE|SYS_MODULE|"
                       r"DAC_READ_SEARCH)|devices[\"']?\s*:[^\n]*(?:\n\s*-[^\n]*)*?/dev/(?:sd|nvme|vd|xvd|hd|mem|kmem|"
                       r"mapper|dm-|disk)")
COMPOSE_MOUNT: str = r"(?:^|[\s\[,\"'-])(/[^\s\"',\]:]*):|(?:source|device)[\"']?\s*[:=]\s*[\"']?(/[^\s\"',}]*)"
"""A compose file that grants the host (COMPOSE_ESCAPE: privileges, host namespaces, devices) and
the host paths it binds (COMPOSE_MOUNT: `- /:/h`, `source: /`, a local volume's `device: /`)."""
COMPOSE_FILES: tuple[str, ...] = ("compose.yaml", "compose.yml", "docker-compose.yml", "docker-compose.yaml")
ATTACH: dict[str, str] = {"gdb": "-p --pid", "strace": "-p --attach", "ltrace": "-p", "lldb": "-p --attach-pid",
                          "gcore": "*", "gdbserver": "--attach", "pyrasite": "*", "frida": "-p --attach-pid",
                          "py-spy": "-p --pid", "pstack": "*", "ptrace": "-p", "bpftrace": "-p"}
"""Programs that attach to a running process: options naming the pid ("*": the first operand is
one). Attaching to pid 1 (the host's init when the pid namespace is shared) or running code in
the process asks; debugging one's own process is ordinary."""
PROC_FD: str = r"^/proc/(?:\d+|[*?\[][^/]*)/(?:fd|fdinfo|map_files)(?:/|$)"
"""Another process's open files (`/proc/1/fd/3` of the host's init when the pid namespace is shared)."""
CODE_ESCAPE: str = (r"(?:containers\.(?:run|create)|create_container|createContainer|ContainerCreate)\b[\s\S]{0,600}?"
                    r"(?:privileged[\"']?\s*[=:]\s*(?:True|true)|volumes\s*=\s*\{\s*[\"']/[\"']|"
                    r"[\"']/[\"']\s*:\s*\{\s*[\"']bind|[Bb]inds[\"']?\s*[=:]\s*\[\s*[\"']/(?:etc|root|proc)?:|"
                    r"(?:pid_mode|network_mode|PidMode|NetworkMode)[\"']?\s*[=:]\s*[\"']host|"
                    r"cap_add\s*=\s*\[[^\]]*(?:SYS_ADMIN|ALL))")
"""Container SDK code (docker-py, dockerode, the Go client) that starts a container with the host."""
# fmt: on

CODE_SENDS: str = (r"urlopen|urllib|\brequests\b|httpx|aiohttp|http\.client|HTTPConnection|fetch\(|axios|"
                   r"https?\.(?:get|request)\(|XMLHttpRequest|HTTP::Tiny|LWP|Net::HTTP|open-uri|Faraday|"
                   r"HTTParty|RestClient|file_get_contents\(\s*[\"']https?:|curl_init|dns\.|gethostbyname|"
                   r"getaddrinfo|smtplib|Net::SMTP|ftplib|paramiko|websocket|"
                   r"require\(\s*[\"'](?:node:)?(?:https?|net|dgram|tls)[\"']\s*\)|"
                   r"from\s+[\"'](?:node:)?(?:https?|net)[\"']")
CODE_ENV: str = (r"os\.environ(?!\s*(?:\.get\b|\[|\.setdefault|\.pop|\.update|\.copy\(\)\s*\[|=[^=]))|"
                 r"\bdict\(\s*environ\b|\benviron\.(?:items|copy|keys|values)\(|os\.getenvb?\(\s*\)|"
                 r"process\.env(?!\s*(?:\.\w|\[|\?\.|=[^=]))|%ENV\b|\bENV\.(?:to_h|to_a|to_hash|inspect|each|"
                 r"map|keys|values|select|filter_map|sort)\b|\bENV\s*\)|\$_ENV\b(?!\s*\[)|"
                 r"\$_SERVER\b(?!\s*\[)|\bgetenv\(\s*\)|System\.getenv\(\s*\)|Sys\.getenv\(\s*\)|"
                 r"/proc/self/environ|Deno\.env\.toObject|Bun\.env(?!\.\w)")
CODE_NAMED_ENV: str = (
    r"""(?:os\.environ(?:\.get)?\s*[\[(]\s*|os\.getenvb?\(\s*|process\.env(?:\.|\[\s*)|\bENV(?:\.fetch\(\s*|\[\s*)|"""
    r"""\$ENV\{\s*|getenv\(\s*|System\.getenv\(\s*|Deno\.env\.get\(\s*|Bun\.env\.)["']?"""
    r"""(\w*(?:SECRET|TOKEN|PASSWORD|PASSWD|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIAL|AUTH_?KEY|SIGNING_?KEY)\w*)""")
"""Interpreter code reading one secret-named environment variable (`os.environ["AWS_SECRET_ACCESS_KEY"]`)."""
CODE_SECRETS: str = (r"\.ssh/id_|\.aws/credentials|\.netrc\b|\.git-credentials|\.docker/config\.json|"
                     r"\.kube/config|logins\.json|key4\.db|Login Data|\.config/gcloud|\.pgpass|\.pypirc|"
                     r"\.vault-token|\.config/gh/hosts|/etc/shadow|/var/run/secrets/|"
                     r"\.password-store|\.local/share/keyrings|"
                     r"(?:popen|check_output|getoutput|run|call|execSync|exec|spawnSync|system|qx|`)\s*\(?\s*\[?\s*"
                     r"[\"'](?:env|printenv|set|export -p)[\"']|gh[\"', ]+auth[\"', ]+token|print-access-token|"
                     r"get-access-token|export-credentials|credential[\"', ]+fill|find-generic-password|"
                     r"secret-tool[\"', ]+lookup")
