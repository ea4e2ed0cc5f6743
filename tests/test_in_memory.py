"""A memory in memory (`sqlite://`, one connection for the process) used from many threads at once, as an
agent server's heartbeat beside its tools' threads uses it: each thread's transaction stays its own."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable

from helpers import claim, scenario, web, world

from memory_core import MemoryService, make_engine, parse, replay


def test_threads_take_turns_on_the_one_connection() -> None:
    svc = MemoryService(make_engine("sqlite://"))
    replay(parse(json.dumps(scenario([]))), svc)
    errors: list[str] = []

    def guarded(work: Callable[[], None]) -> Callable[[], None]:
        def body() -> None:
            try:
                work()
            except Exception as exc:  # noqa: BLE001  (any failure is the finding)
                errors.append(repr(exc))

        return body

    def reads() -> None:
        for _ in range(100):
            svc.organizations()
            svc.counts()

    def teaches(n: int) -> Callable[[], None]:
        def body() -> None:
            for i in range(10):
                run, turn = f"r{n}-{i}", f"t{n}-{i}"
                svc.start_run(run, org="acme", person="dana", workflow="research")
                svc.open_turn(turn, run=run, request={"text": "x"})
                svc.record(turn, record=web(f"https://{n}.example/{i}", claim("Acme", "supplies", f"E{n}-{i}")))
                svc.end_turn(turn, status="completed")

        return body

    threads = [threading.Thread(target=guarded(reads)) for _ in range(3)]
    threads += [threading.Thread(target=guarded(teaches(n))) for n in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    taught = {f["object"]["name"] for f in world(json.loads(json.dumps(svc.export_state())))}
    assert taught >= {f"E{n}-{i}" for n in range(3) for i in range(10)}
