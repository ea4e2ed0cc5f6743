"""A real run opened as a notebook (#23): exported as `export --run RUN` exports it, opened by the notebook's loader."""

from __future__ import annotations

from ..plain import Obj
from ..usecases.facade import MemoryService
from . import notebook as nbk
from .notebook_file import MadeFrom


def run_export(svc: MemoryService, org: str, run_id: str) -> Obj:
    """One run as a scenario: `doc`, `omitted`, as a `sentence`, `opens` (R30) and `made_from` (R29-R31)."""
    # named for the notebook's reader, who need not know where the database is (not `export`'s URL)
    doc, omitted = svc.export_scenario(org=org, run=run_id, where=f"the memory of {org}")
    doc = {**doc, "title": f"Run {run_id} of {org}"}
    sentence = None
    if omitted:
        sentence = (
            f"Not everything of run {run_id} can be written back, so the notebook leaves out: "
            + "; ".join(omitted)
            + "."
        )
    start = next((e for e in doc["events"] if e["do"] == "start_run"), None)  # none: only settings changes
    made_from = {"org": org, "run": run_id, "person": start["person"] if start else None}
    return {"doc": doc, "omitted": omitted, "sentence": sentence, "opens": start is not None, "made_from": made_from}


def file_name(run_id: str) -> str:
    """The name the notebook gives the run's scenario (its "Download scenario")."""
    return f"run-{run_id}.json"


def notebook_of(export: Obj, run_id: str) -> nbk.Notebook:
    """A notebook of the exported run, none of its cells run, removed with the run or its person (scrub_erased)."""
    return nbk.new(export["doc"], file_name(run_id), made_from=MadeFrom.model_validate(export["made_from"]))
