"""Memory for agents over MCP: the server (`server`), its tools (`tools`: one function each, the
scenario event's fields as parameters; `models`: their answers), sessions that own their runs
(`sessions`), and serving (`serve`). An adapter over the facade: it translates and decides nothing."""
