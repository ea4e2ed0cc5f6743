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


def run_export(svc: MemoryService, org: str, run_id: str) -> Obj:
    """One run as a scenario (`doc`), what it leaves out (`omitted`, one sentence each), those said as
    one sentence for a page (`sentence`, None when nothing is), and whether it holds any event to run
    (`opens`: a run whose person deleted their account holds none, R30)."""
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
    opens = any(e["do"] == "start_run" for e in doc["events"])  # not only its organization's settings changes
    return {"doc": doc, "omitted": omitted, "sentence": sentence, "opens": opens}


def file_name(run_id: str) -> str:
    """The name the notebook gives the run's scenario (its "Download scenario")."""
    return f"run-{run_id}.json"


def notebook_of(export: Obj, run_id: str) -> nbk.Notebook:
    """A notebook of the exported run, with a fresh scratch memory holding its setup; its cells are
    the run's events, none run yet."""
    return nbk.new(export["doc"], file_name(run_id))
