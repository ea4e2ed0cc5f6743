"""Memory for agents over MCP: the server (`server`), its tools (`tools`, `models`), arguments checked
by the scenario format (`checks`), sessions that own their runs (`sessions`), and serving (`serve`).
An adapter over the facade: it translates and decides nothing."""
