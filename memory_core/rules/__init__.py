"""Pure decisions of the memory rules, each citing its number: no clock, no session, no mutation."""
