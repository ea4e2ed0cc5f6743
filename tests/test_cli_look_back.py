"""The look-back commands as a person types them (R32 to R34): the README's own examples run, the
history's columns line up, a diff's JSON carries no float noise, a time outside the calendar is a
sentence with exit 2. The CLI is called in this process (`main`), on a SQLite file."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import time
from pathlib import Path

import pytest

from memory_core.__main__ import main

#: A SQLite file of its own, whatever the backend under test.
pytestmark = pytest.mark.backend_free
ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def story(tmp_path_factory) -> str:
    db = f"sqlite:///{tmp_path_factory.mktemp('story') / 'story.db'}"
    assert main(["replay", str(ROOT / "sample_data" / "demo.json"), "--db", db]) == 0
    return db


def run(capsys, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_the_readme_look_back_examples_run_as_written(tmp_path, monkeypatch, capsys):
    """Each example line as a shell reads it (bash splits its words and runs its `$(date ...)`), then
    the command itself in this process (`main`), in a directory laid out like a clone's."""
    block = ROOT.joinpath("README.md").read_text().split("### Look back", 1)[1].split("```", 2)[1]
    lines = [ln.split("  #", 1)[0].strip() for ln in block.splitlines() if ln.startswith(".venv/bin/python")]
    assert any(" diff " in ln for ln in lines) and any("--to" in ln for ln in lines)
    (tmp_path / ".memory").mkdir()
    (tmp_path / "sample_data").symlink_to(ROOT / "sample_data")
    monkeypatch.chdir(tmp_path)
    prefix = ".venv/bin/python -m memory_core "
    for line in lines:
        if "replay FILE" in line:
            continue  # the one line that names a placeholder
        line = line.replace(" [--json]", "").replace(" [--org ORG] [--run RUN]", "")
        assert line.startswith(prefix), line
        words, _, into = line.removeprefix(prefix).partition(" > ")
        if "$(date" in words:  # `date` says whole seconds: the next one, as a person typing the line reaches it
            time.sleep(1.01 - time.time() % 1)  # (the commands before it ran within the second it truncates to)
        argv = subprocess.run(["bash", "-c", f"printf '%s\\0' {words}"], capture_output=True, text=True, check=True)
        code, out, err = run(capsys, *argv.stdout.split("\0")[:-1])
        assert code == 0, (line, err)
        assert out.strip(), line
        if into:
            (tmp_path / into.strip()).write_text(out)


def test_history_columns_line_up(capsys, story):
    code, out, _ = run(capsys, "history", "--db", story)
    assert code == 0
    lines = out.splitlines()
    assert lines[0].endswith("  before history was kept")
    assert len({len(ln.split()[0]) + len(ln) - len(ln.lstrip()) for ln in lines}) == 1  # numbers end in one column
    label_at = {ln.index("+00:00") + len("+00:00  ") for ln in lines[1:]}
    assert label_at == {lines[0].index("before history was kept")}  # what happened starts in one column


def test_a_diff_in_json_carries_no_float_noise(capsys, story):
    code, out, _ = run(capsys, "diff", "--db", story, "--from", "0", "--to", "cp-2", "--json")
    assert code == 0
    numbers = re.findall(r"\d+\.\d+", out)
    assert numbers and all(len(n.split(".")[1]) <= 12 for n in numbers)
    doc = json.loads(out)
    assert doc["to"]["what"].startswith("cp-2 completed")


@pytest.mark.parametrize("when", ["0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00"])
@pytest.mark.parametrize("command", ["state --at {}", "diff --from {} --to 3", "diff --from 3 --to {}"])
def test_a_time_outside_the_calendar_is_a_sentence_and_exit_2(capsys, story, command, when):
    code, out, err = run(capsys, *shlex.split(command.format(when)), "--db", story)
    assert code == 2 and out == ""
    assert err.strip() == f"no moment '{when}': that time in UTC is outside the calendar (years 1 to 9999)"
