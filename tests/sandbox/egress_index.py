"""A package index on host loopback for the egress tests: a wheel built here, an npm tarball, a dumb-HTTP git repo.

`LocalIndex` serves, from a folder, with a stdlib HTTP server on 127.0.0.1:
`/simple/<name>/` (PEP 503 pages), `/npm/<name>` (npm registry metadata) and
the files themselves. It counts the requests it got, so a test can show that a
refused connection never reached it.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import tarfile
import threading
import zipfile
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


def build_wheel(folder: Path, name: str = "tetherdemo", version: str = "1.0") -> Path:
    """A pure-Python wheel with one module, built by hand (no build backend needed)."""
    dist = f"{name}-{version}.dist-info"
    files = {
        f"{name}/__init__.py": b"VALUE = 42\n",
        f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode(),
        f"{dist}/WHEEL": b"Wheel-Version: 1.0\nGenerator: tether-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = []
    for path, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(data)}")
    record.append(f"{dist}/RECORD,,")
    files[f"{dist}/RECORD"] = ("\n".join(record) + "\n").encode()
    wheel = folder / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        for path, data in files.items():
            z.writestr(path, data)
    page = folder / "simple" / name / "index.html"
    page.parent.mkdir(parents=True, exist_ok=True)
    sha = hashlib.sha256(wheel.read_bytes()).hexdigest()
    page.write_text(f'<html><body><a href="../../{wheel.name}#sha256={sha}">{wheel.name}</a></body></html>\n')
    return wheel


def build_npm(folder: Path, port: int, name: str = "tether-demo", version: str = "1.0.0") -> Path:
    """An npm tarball and its registry document at `/npm/<name>`."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for path, data in {"package/package.json": json.dumps({"name": name, "version": version}).encode(),
                           "package/index.js": b"module.exports = 42;\n"}.items():
            info = tarfile.TarInfo(path)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    tgz = folder / f"{name}-{version}.tgz"
    tgz.write_bytes(buf.getvalue())
    doc = {"name": name, "versions": {version: {"name": name, "version": version, "dist": {
        "tarball": f"http://127.0.0.1:{port}/{tgz.name}", "shasum": hashlib.sha1(tgz.read_bytes()).hexdigest()}}},
        "dist-tags": {"latest": version}}
    (folder / "npm").mkdir(exist_ok=True)
    (folder / "npm" / name).write_text(json.dumps(doc))
    return tgz


class _Handler(SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:  # quiet
        pass

    def do_GET(self) -> None:
        self.server.hits.append(self.path)  # type: ignore[attr-defined]
        super().do_GET()


class LocalIndex:
    """Serves `folder` on 127.0.0.1 (a free port) until `close()`; `hits` lists the paths asked for."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Handler, directory=str(folder)))
        self.server.hits = []  # type: ignore[attr-defined]
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def hits(self) -> list[str]:
        return self.server.hits  # type: ignore[attr-defined]

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self.port}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
