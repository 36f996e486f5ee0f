"""`collect()` (behind `tether sandbox gc` and `resume`) while others remove the same containers (issue 12).

Several collectors race over the same orphans: each may find a container
already gone between listing and removing it; none may raise for that.
"""

from __future__ import annotations

import socket
import threading
import uuid

import pytest

from sandbox.cleanup import HOST_LABEL, LABEL, PID_LABEL, RUN_LABEL, START_LABEL, collect

pytestmark = pytest.mark.docker


def _orphans(client, image: str, run: str, n: int) -> list[str]:
    """Containers labelled as owned by a process that is gone (pid 2**22 + 1 never exists)."""
    labels = {LABEL: "1", RUN_LABEL: run, PID_LABEL: str(2**22 + 1), START_LABEL: "1", HOST_LABEL: socket.gethostname()}
    return [client.containers.create(image, ["true"], labels=labels).id for _ in range(n)]


def test_racing_collectors_each_tolerate_a_container_removed_under_them(docker_client, tiny_image) -> None:
    run = f"race-{uuid.uuid4().hex[:8]}"
    for _ in range(2):
        ids = _orphans(docker_client, tiny_image, run, 24)
        errors: list[BaseException] = []
        results: list[list] = []

        def collector(results: list[list] = results, errors: list[BaseException] = errors) -> None:
            try:
                results.append(collect(docker_client))
            except BaseException as e:  # the assertion below names it
                errors.append(e)

        threads = [threading.Thread(target=collector) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
        assert errors == []
        left = docker_client.containers.list(all=True, filters={"label": f"{RUN_LABEL}={run}"})
        assert left == []
        removed = {x.id for r in results for x in r if x.run == run and x.removed}
        assert removed == {i[:12] for i in ids}


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
