"""In-container forwarder: runs one command with a loopback proxy port bridged to the host's egress socket.

Copied into the egress folder mounted in the sandbox and run there by the
image's python3 (standard library only, no site packages) as
`python3 -S forward.py SOCKET NO_PROXY -- ARGV...`. It listens on
127.0.0.1 (a free port), points the proxy variables of ARGV at it, runs ARGV
and exits with its status. It decides nothing: the host proxy behind the
socket admits or refuses every connection.
"""

import os
import socket
import subprocess
import sys
import threading

PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "npm_config_proxy", "npm_config_https_proxy",
              "YARN_HTTP_PROXY", "YARN_HTTPS_PROXY", "CARGO_HTTP_PROXY", "PIP_PROXY")


def _pipe(src, dst):
    try:
        while True:
            data = src.recv(262144)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for s in (dst, src):
            try:
                s.shutdown(socket.SHUT_WR if s is dst else socket.SHUT_RD)
            except OSError:
                pass


def _bridge(client, path):
    try:
        up = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        up.connect(path)
    except OSError:
        client.close()
        return
    t = threading.Thread(target=_pipe, args=(up, client), daemon=True)
    t.start()
    _pipe(client, up)
    t.join()
    client.close()
    up.close()


def _serve(listener, path):
    while True:
        try:
            client, _ = listener.accept()
        except OSError:
            return
        threading.Thread(target=_bridge, args=(client, path), daemon=True).start()


def main(argv):
    if len(argv) < 4 or argv[2] != "--":
        sys.stderr.write("usage: forward.py SOCKET NO_PROXY -- ARGV...\n")
        return 2
    path, no_proxy, command = argv[0], argv[1], argv[3:]
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    url = f"http://127.0.0.1:{listener.getsockname()[1]}"
    env = dict(os.environ)
    env.update({name: url for name in PROXY_VARS})
    env.update({"NO_PROXY": no_proxy, "no_proxy": no_proxy, "npm_config_noproxy": no_proxy})
    threading.Thread(target=_serve, args=(listener, path), daemon=True).start()
    try:
        code = subprocess.call(command, env=env)
    except OSError as e:
        sys.stderr.write(f"tether: cannot run {command[0]}: {e}\n")
        return 127
    return 128 - code if code < 0 else code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
