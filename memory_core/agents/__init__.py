"""Memory for agents over MCP: the server, its tools (one function each, an event's fields as parameters; `models`:
their answers), sessions that own their runs, and serving. An adapter over the facade: it translates, decides nothing."""
