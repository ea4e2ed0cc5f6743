"""The configured database's service, one per process (a cached resource every page shares)."""

from __future__ import annotations

import streamlit as st

from memory_core import MemoryService


@st.cache_resource(show_spinner=False)
def main_service(url: str) -> MemoryService:
    """The engine of the configured database, one per process (a cached resource)."""
    return MemoryService.at(url)
