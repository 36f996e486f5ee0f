"""`collect()` (behind `tether sandbox gc` and `resume`) while others remove the same containers (issue 12).

Deterministic form of the race test_sandbox_gc_race.py runs with threads:
another process removes the orphans right after `collect()` listed them.
"""

from __future__ import annotations

import socket
import uuid

import pytest

from tether.sandbox.cleanup import HOST_LABEL, LABEL, PID_LABEL, RUN_LABEL, START_LABEL, collect

pytestmark = pytest.mark.docker


def _orphans(client, image: str, run: str, n: int) -> list[str]:
    """Containers labelled as owned by a process that is gone (pid 2**22 + 1 never exists)."""
    labels = {LABEL: "1", RUN_LABEL: run, PID_LABEL: str(2**22 + 1), START_LABEL: "1", HOST_LABEL: socket.gethostname()}
    return [client.containers.create(image, ["true"], labels=labels).id for _ in range(n)]


def test_a_container_removed_between_listing_and_removal_is_not_an_error(docker_client, tiny_image) -> None:
    """Deterministic form of the race: another process removes every listed orphan right after the listing."""
    import docker

    run = f"race-{uuid.uuid4().hex[:8]}"
    ids = _orphans(docker_client, tiny_image, run, 3)

    class RemovedUnderfoot(docker.APIClient):
        def containers(self, *args, **kwargs):  # noqa: ANN002, ANN003
            rows = super().containers(*args, **kwargs)
            for row in rows:
                if (row.get("Labels") or {}).get(RUN_LABEL) == run:
                    super().remove_container(row["Id"], force=True)  # the other process got there first
            return rows

    client = docker.from_env(timeout=60)
    client.api.__class__ = RemovedUnderfoot
    found = [x for x in collect(client) if x.run == run]
    assert sorted(x.id for x in found) == sorted(i[:12] for i in ids)
    assert docker_client.containers.list(all=True, filters={"label": f"{RUN_LABEL}={run}"}) == []
