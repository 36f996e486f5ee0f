"""`collect()` (run before every `tether run/resume/approve`) survives containers vanishing meanwhile."""

from __future__ import annotations

import threading
import uuid

import pytest

from tether.sandbox.cleanup import collect, owner_labels

pytestmark = pytest.mark.docker


def test_collect_does_not_crash_when_another_process_removes_a_container(docker_client, tiny_image):
    run = f"gcrace-{uuid.uuid4().hex[:6]}"
    made = [
        docker_client.containers.create(tiny_image, ["sleep", "300"], labels=owner_labels(run), name=f"{run}-{i}")
        for i in range(24)
    ]
    errors: list[BaseException] = []

    def remove_all() -> None:
        for c in made:
            c.remove(force=True)

    remover = threading.Thread(target=remove_all)
    remover.start()
    try:
        while remover.is_alive():
            try:
                seen = collect(docker_client)  # our own pid owns them: listed, never removed here
            except Exception as e:  # noqa: BLE001 - the failure under test
                errors.append(e)
                break
            assert not any(s.removed for s in seen if s.run == run)
    finally:
        remover.join()
    assert not errors, errors
