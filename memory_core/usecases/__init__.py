"""Use cases by family behind the MemoryService facade: one use case = one transaction."""
