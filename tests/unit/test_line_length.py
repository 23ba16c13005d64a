"""Every line of every program in snippets/ fits the site's code column: at most 100 characters.

At 1280 px the code column of a lesson page holds about 110 characters (measured by the
site's browser test), and each program's own page shows the whole file, so every line of
every ``.py`` and ``.sbatch`` file counts, not only the sections a lesson includes: a longer
line makes its block scroll sideways. 100 leaves room for the block's padding and a
narrower font fallback. Launch lines continue over several lines with a trailing
backslash (coursekit.runspec), long calls are split the way black splits them, and long
trailing comments go on their own line above.
"""
from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SNIPPETS = ROOT / "snippets"
LIMIT = 100


def test_every_program_line_fits_the_code_column() -> None:
    files = sorted(p for p in SNIPPETS.rglob("*") if p.suffix in (".py", ".sbatch") and p.is_file())
    assert files, f"no .py or .sbatch file under {SNIPPETS}"
    offenders = [
        f"{path.relative_to(ROOT)}:{number}: {len(line)} characters"
        for path in files
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if len(line) > LIMIT
    ]
    assert not offenders, (f"{len(offenders)} line(s) longer than {LIMIT} characters; wrap them "
                           "(see this module's docstring):\n" + "\n".join(offenders))
