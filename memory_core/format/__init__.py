"""The scenario format: parse and check a document, and the event engine that replays it."""
