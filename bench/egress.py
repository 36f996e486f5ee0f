"""What the egress proxy costs a granted command: a download from a host-loopback server, direct vs proxied.

Inside one Debian sandbox: `python3` fetches a file of SIZE bytes from an HTTP
server on host 127.0.0.1, N times through the proxy (forwarder -> unix
socket -> proxy), and the same server is fetched N times from the host
directly, interleaved. Also times the grant itself (a no-op command with
and without one), i.e. what opening the network adds to a command.

    .venv/bin/python bench/egress.py [--image tether-sandbox:debian] [-n 5] [--mb 32]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import urllib.request
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from threading import Thread

sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from tether.sandbox.config import DockerSandboxConfig  # noqa: E402
from tether.sandbox.docker import DockerSandbox  # noqa: E402
from tether.sandbox.network import SandboxNetwork  # noqa: E402


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--image", default="tether-sandbox:debian")
    ap.add_argument("-n", type=int, default=5)
    ap.add_argument("--mb", type=int, default=32)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        srv, ws = Path(tmp) / "srv", Path(tmp) / "ws"
        srv.mkdir()
        ws.mkdir()
        (srv / "blob").write_bytes(b"\0" * (a.mb << 20))
        server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(srv)))
        Thread(target=server.serve_forever, daemon=True).start()
        host = f"127.0.0.1:{server.server_address[1]}"
        url = f"http://{host}/blob"
        fetch = f"python3 -c \"import urllib.request as u; assert len(u.urlopen('{url}').read()) == {a.mb << 20}\""
        config = DockerSandboxConfig(image=a.image, default_timeout_s=300, memory="1g")
        direct, proxied, bare, granted, start = [], [], [], [], []
        with DockerSandbox(ws, config, network=SandboxNetwork(addresses=[host])) as sb:
            for _ in range(a.n):
                t = time.perf_counter()
                urllib.request.urlopen(url).read()
                direct.append(time.perf_counter() - t)
                with sb.egress([host]):
                    r = sb.exec(fetch)
                assert r.exit_code == 0, r.output
                proxied.append(r.duration_s)
                start.append(sb.exec("python3 -c 'import urllib.request'").duration_s)
                t = time.perf_counter()
                sb.exec("true")
                bare.append(time.perf_counter() - t)
                t = time.perf_counter()
                with sb.egress([host]):
                    sb.exec("true")
                granted.append(time.perf_counter() - t)
        server.shutdown()
    med = statistics.median
    print(f"download {a.mb} MiB x{a.n}: host direct {med(direct) * 1000:.0f} ms ({a.mb / med(direct):.0f} MiB/s), "
          f"sandbox through the proxy {med(proxied) * 1000:.0f} ms ({a.mb / med(proxied):.0f} MiB/s, includes "
          f"python3 start-up), ratio {med(proxied) / med(direct):.1f}x; python3 start-up alone in the sandbox "
          f"{med(start) * 1000:.0f} ms, so the transfer took {(med(proxied) - med(start)) * 1000:.0f} ms "
          f"({a.mb / max(med(proxied) - med(start), 1e-6):.0f} MiB/s)")
    print(f"`true`: without a grant {med(bare) * 1000:.0f} ms, with a grant (forwarder start + proxy open/close) "
          f"{med(granted) * 1000:.0f} ms, +{(med(granted) - med(bare)) * 1000:.0f} ms")


if __name__ == "__main__":
    main()
