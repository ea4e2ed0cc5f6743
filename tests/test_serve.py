"""serve.py, which `make run` starts: `streamlit run app.py` with the pages' libraries loaded meanwhile."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.backend_free  # no test database: the same on every backend

ROOT = Path(__file__).resolve().parent.parent


def test_serve_passes_its_arguments_to_streamlit_run_app():
    out = subprocess.run([sys.executable, "serve.py", "--help"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "Usage: streamlit run" in out.stdout


def test_what_serve_loads_beforehand_imports():
    code = "import sys; import serve; serve._warm(); print(all(m in sys.modules for m in ('memory_core', 'pandas')))"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "True", out.stderr
