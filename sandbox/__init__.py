"""Docker sandbox: image provisioning, hardened containers, exec with limits.

Modules: `base` (the Sandbox protocol, ExecResult), `config`, `errors`,
`docker` (DockerSandbox), `engine` (reaching Docker), `images` and `rootfs`
(registry-free images), `workspace` (mounts and the sandbox user), `output`
(stream framing, output cap), `cleanup` (labels, exit hooks, gc) and
`commands` (what `tether sandbox ...` runs). Nothing here imports the docker
SDK until a sandbox is used.
"""
