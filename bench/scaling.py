"""What one PostgreSQL server holds, and what a hot standby adds (docs/scaling.md).

    bash .ci/with-standby python bench/scaling.py [--supports 100000] [--runs 4]

Needs the pair `.ci/with-standby` starts (MEMORY_TEST_PRIMARY_URL and MEMORY_TEST_STANDBY_URL).

1. One server: `python -m memory_core generate --supports N` into an empty database on the primary,
   timed; the database's size on disk, the largest tables, and bytes per support.
2. Its rates: B1's workload (bench/run.py: teach_workload, turns of 10 records of 2 claims) taught
   through the service, in supports per second; turn reads (GraphResolve, on the primary) and the
   dashboard's reads (a graph's 200 heaviest facts, the weights table) per second, from the primary
   and from the standby.
3. The standby under B1's load: while the workload teaches, a sampler asks every 10 ms how far the
   standby has replayed (bytes behind the primary's WAL insert position) and what the primary says
   of its replay lag (pg_stat_replication.replay_lag, a time); and a reader in another house (a
   dashboard process) reads the weights table in a loop, counting the reads the standby served.

Results go to bench/scaling.json; docs/scaling.md quotes them. Tests never assert on time: these
numbers are read by people.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from run import teach_workload  # noqa: E402
from sqlalchemy import create_engine, text  # noqa: E402

from memory_core import MemoryService  # noqa: E402

OUT = ROOT / "bench" / "scaling.json"
NAME = "scaling"


def lsn(value: str | None) -> int:
    high, low = str(value).split("/")
    return (int(high, 16) << 32) | int(low, 16)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))]


def fresh_database(server: str) -> str:
    admin = create_engine(f"{server}/postgres", isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{NAME}"'))
        conn.execute(text(f'CREATE DATABASE "{NAME}"'))
    admin.dispose()
    return f"{server}/{NAME}"


def wait_replayed(primary: Any, standby: Any) -> None:
    with primary.connect() as p:
        target = lsn(p.execute(text("SELECT pg_current_wal_insert_lsn()")).scalar())
    while True:
        with standby.connect() as s:
            if lsn(s.execute(text("SELECT pg_last_wal_replay_lsn()")).scalar()) >= target:
                return
        time.sleep(0.02)


def one_server(url: str, supports: int) -> dict[str, Any]:
    t0 = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-m", "memory_core", "generate", "--supports", str(supports), "--db", url],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    took = time.perf_counter() - t0
    engine = create_engine(url)
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.exec_driver_sql("VACUUM ANALYZE")  # sizes as the server keeps them, not with the load's dead rows
    with engine.connect() as conn:
        size = conn.execute(text("SELECT pg_database_size(current_database())")).scalar_one()
        tables = conn.execute(
            text(
                "SELECT c.relname, pg_total_relation_size(c.oid), c.reltuples::bigint FROM pg_class c "
                "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND c.relkind = 'r' "
                "ORDER BY 2 DESC"
            )
        ).all()
        counted = {
            t: conn.execute(text(f'SELECT count(*) FROM "{t}"')).scalar_one()
            for t in ("support", "fact", "entity", "record", "turn", "run", "moment")
        }
    engine.dispose()
    return {
        "generate_seconds": round(took, 1),
        "generate_output": out.stdout.strip(),
        "database_bytes": int(size),
        "bytes_per_support": round(size / counted["support"]),
        "rows": counted,
        "largest_tables": [{"table": t, "bytes": int(b), "rows": int(r)} for t, b, r in tables[:8]],
    }


def read_rates(svc: MemoryService, seconds: float = 3.0) -> dict[str, float]:
    """Reads per second for a few seconds each: a turn's GraphResolve (the primary's, counted), and
    two dashboard reads (the standby's when the service has one and it has replayed)."""
    svc.start_run(f"reader-{time.time_ns()}", org="bench", person="p0")
    turn = f"reader-t-{time.time_ns()}"
    svc.open_turn(turn, run=svc.run_ids("bench")[-1], request={"text": "read", "claims": []})
    names = [f"Supplier {i}" for i in range(50)]

    def rate(call: Any) -> float:
        n, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < seconds:
            call(n)
            n += 1
        return round(n / (time.perf_counter() - t0), 1)

    return {
        "GraphResolve (a turn's read) /s": rate(
            lambda n: svc.read(turn, call="GraphResolve", args={"name": names[n % 50]})
        ),
        "a graph's 200 heaviest facts /s": rate(lambda n: svc.graph("world", "bench", limit=200)),
        "the weights table, 100 rows /s": rate(lambda n: svc.facts_table("bench", limit=100)),
    }


def teach_rate(svc: MemoryService, runs: int, tag: str) -> float:
    taught, t0 = 0, time.perf_counter()
    for i in range(runs):
        n, _ = teach_workload(svc, turns=50, run_id=f"{tag}-{i}", seed=30 + i)
        taught += n
    return round(taught / (time.perf_counter() - t0), 1)


def under_load(primary_url: str, standby_url: str, runs: int) -> dict[str, Any]:
    """B1's workload on the primary through a service with the standby, a sampler of the standby's
    lag, and a dashboard reader in another house."""
    writer = MemoryService.at(primary_url, read=standby_url)
    reader = MemoryService.at(primary_url, read=standby_url)
    primary = create_engine(primary_url.rsplit("/", 1)[0] + "/postgres", isolation_level="AUTOCOMMIT")
    standby = create_engine(standby_url.rsplit("/", 1)[0] + "/postgres", isolation_level="AUTOCOMMIT")
    stop = threading.Event()
    lag_bytes: list[int] = []
    lag_ms: list[float] = []
    reads: dict[str, int] = {}

    def sample() -> None:
        with primary.connect() as p, standby.connect() as s:
            while not stop.is_set():
                at = lsn(p.execute(text("SELECT pg_current_wal_insert_lsn()")).scalar())
                replayed = lsn(s.execute(text("SELECT pg_last_wal_replay_lsn()")).scalar())
                lag_bytes.append(max(0, at - replayed))
                seen = p.execute(
                    text("SELECT extract(epoch FROM replay_lag) * 1000 FROM pg_stat_replication LIMIT 1")
                ).scalar()
                if seen is not None:
                    lag_ms.append(float(seen))
                time.sleep(0.01)

    def read_loop() -> None:
        while not stop.is_set():
            reader.facts_table("bench", limit=100)

    with primary.connect() as p:
        wal0 = lsn(p.execute(text("SELECT pg_current_wal_insert_lsn()")).scalar())
    threads = [threading.Thread(target=sample), threading.Thread(target=read_loop)]
    for t in threads:
        t.start()
    t0 = time.perf_counter()
    rate = teach_rate(writer, runs, "loaded")
    took = time.perf_counter() - t0
    stop.set()
    for t in threads:
        t.join()
    with primary.connect() as p:
        wal1 = lsn(p.execute(text("SELECT pg_current_wal_insert_lsn()")).scalar())
    reads = {"reader": dict(reader.read_servers()["served"]), "writer": dict(writer.read_servers()["served"])}
    read_count = sum(reads["reader"].values())
    for svc in (writer, reader):
        svc.engine.dispose()
    primary.dispose()
    standby.dispose()
    return {
        "supports_per_second_with_the_standby": rate,
        "seconds": round(took, 1),
        "wal_bytes_per_second": round((wal1 - wal0) / took),
        "lag_bytes": {
            "samples": len(lag_bytes),
            "p50": pct(lag_bytes, 50),
            "p95": pct(lag_bytes, 95),
            "max": max(lag_bytes),
            "mean": round(statistics.fmean(lag_bytes)),
        },
        "replay_lag_ms": {
            "samples": len(lag_ms),
            "p50": round(pct(lag_ms, 50), 2) if lag_ms else None,
            "p95": round(pct(lag_ms, 95), 2) if lag_ms else None,
            "max": round(max(lag_ms), 2) if lag_ms else None,
        },
        "reads_served": reads,
        "reader_reads_per_second": round(read_count / took, 1),
    }


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--supports", type=int, default=100_000)
    p.add_argument("--runs", type=int, default=4, help="B1's workload runs (50 turns of 10 records each)")
    args = p.parse_args()
    primary_server = os.environ["MEMORY_TEST_PRIMARY_URL"].rstrip("/")
    standby_server = os.environ["MEMORY_TEST_STANDBY_URL"].rstrip("/")
    url = fresh_database(primary_server)
    standby_url = f"{standby_server}/{NAME}"
    results: dict[str, Any] = {
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()},
        "supports": args.supports,
    }
    print(f"generating {args.supports:,} supports into {url}", flush=True)
    results["one_server"] = one_server(url, args.supports)
    print(json.dumps(results["one_server"], indent=2), flush=True)
    primary = create_engine(url)
    standby = create_engine(standby_url)
    wait_replayed(primary, standby)
    alone = MemoryService.at(url)
    # The primary streams its WAL to the standby all along (asynchronous): this is B1 with a standby attached.
    results["teaching_supports_per_second"] = teach_rate(alone, args.runs, "alone")
    results["reads_per_second_from_the_primary"] = read_rates(alone)
    alone.engine.dispose()
    wait_replayed(primary, standby)
    with_standby = MemoryService.at(url, read=standby_url)
    results["reads_per_second_with_the_standby"] = read_rates(with_standby)
    results["reads_served_in_that_measure"] = dict(with_standby.read_servers()["served"])
    with_standby.engine.dispose()
    print("B1's workload with the standby replaying", flush=True)
    results["under_b1_load"] = under_load(url, standby_url, args.runs)
    wait_replayed(primary, standby)
    with primary.connect() as conn:
        results["database_bytes_after"] = int(
            conn.execute(text("SELECT pg_database_size(current_database())")).scalar_one()
        )
    primary.dispose()
    standby.dispose()
    OUT.write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
