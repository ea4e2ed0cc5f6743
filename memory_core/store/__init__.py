"""Storage: the only code that touches a database (engines, connections, transactions, statements, retry, models, migrations)."""
