"""A worker process for the concurrency test: completes its turns, all starting at one moment."""

import json
import sys
import time

from memory_core import MemoryService, make_engine

if __name__ == "__main__":
    url, start_at, turns = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
    svc = MemoryService(make_engine(url, create=False))
    while time.time() < start_at:
        time.sleep(0.001)
    for turn in turns:
        svc.end_turn(turn, status="completed")
    print(json.dumps({"retries": svc.retries}))
