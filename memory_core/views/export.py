"""A real run opened as a notebook (issue #23): what the Runs page's "Open in the Notebook" opens.

The run is exported as the command line exports it (`export --run RUN`, MemoryService.export_scenario:
its organization, people and workflow, then its events at their moments) and opened by the
Notebook's own loader (views/notebook.new: the check `replay` makes), so a product team replays an
agent's real session cell by cell and what-ifs its settings. What could not be written back is said
in a sentence.
"""

from __future__ import annotations

from ..plain import Obj
from ..usecases.facade import MemoryService
from . import notebook as nbk
from .notebook_file import MadeFrom


def run_export(svc: MemoryService, org: str, run_id: str) -> Obj:
    """One run as a scenario (`doc`), what it leaves out (`omitted`, one sentence each), those said as
    one sentence for a page (`sentence`, None when nothing is), whether it holds any event to run
    (`opens`: a run whose person deleted their account holds none, R30), and where it comes from
    (`made_from`: organization, run and person, so its notebook is erased with them, R29-R31)."""
    # for the notebook's reader (its sidebar, its heading), who need not know where the database is:
    # not the command line's "Export of URL at TIME", "What URL recorded"
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
    """A notebook of the exported run, with a fresh scratch memory holding its setup; its cells are
    the run's events, none run yet, and removed when the run or its person is erased (scrub_erased)."""
    return nbk.new(export["doc"], file_name(run_id), made_from=MadeFrom.model_validate(export["made_from"]))
