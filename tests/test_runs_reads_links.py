"""#38.7 on Runs: what a turn read and was told, each name and each weight linked to Fact weights, a weight to
its own fact in the graph it was read from (a trial: weights were plain text, names opened the World graph)."""

from __future__ import annotations

from memory_core.views.reads_trace import trace_lines
from pages._turns import to_weights


def test_a_fact_a_read_was_told_links_its_names_and_its_weight_to_that_fact():
    fact = {"subject": {"name": "Ferro Metals", "kind": "organization"}, "relation": "founded_in"}
    read = {"call": "GraphExpand", "args": {"entity": fact["subject"], "graph": "user"}, "outcome": "ok"}
    read |= {"message": None, "near": None, "within": None, "step": None}
    read["result"] = [fact | {"object": {"value": "1962"}, "weight": 0.8999999999999999}]
    [line] = trace_lines([read], str, to_weights)
    assert line.endswith(
        "told [Ferro Metals](fact-weights?q=Ferro%20Metals) founded_in 1962 "
        "at [0\\.9](fact-weights?graph=user&q=Ferro%20Metals%20founded_in%201962)"  # a link's text inert: 0\\.9
    ), line
