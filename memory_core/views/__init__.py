"""Shaping for people: the state export, the notebook, what-if, the graph drawing, the rulebook."""
