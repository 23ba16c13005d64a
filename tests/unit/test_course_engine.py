"""The segmenter's properties with the course's own Markdown engine (its mkdocs.yml)."""
from __future__ import annotations

from pathlib import Path

from conftest import ROOT
from po_i18n.fuzz import RAW_WORDS, check
from po_i18n.markdown_engine import engine_for


def test_the_course_engine_agrees_on_the_syntax_it_enables():
    """The course's own mkdocs.yml (no old-style containers) on the blocks-style part of
    the grammar: the same properties with the site's exact engine."""
    engine = engine_for(ROOT / "mkdocs.yml")
    page = ("# Title { #title }\n\n/// note | A *note*\n    type: danger\n\nBody with `code`.\n///\n\n"
            "/// details | Q?\n    type: quiz\n\n- [ ] Wrong.\n- [x] Right.\n\nWhy.\n///\n\n"
            '/// tab | First\nOne.\n///\n\n!!! note "Literal"\n    text\n')
    check(page, engine, raw_words=RAW_WORDS)


def test_the_benchs_plain_floor_is_mkdocs_material_and_static_i18n_alone(tmp_path):
    """``course bench``'s build floor: the course's mkdocs.yml without its hooks and
    without the po-i18n plugin (what the build costs without the engine)."""
    import shutil

    import yaml

    from coursekit.bench import _without_hooks

    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    def load(text: str) -> dict:
        return yaml.load(text.replace("!ENV", "").replace("!relative", ""), Loader=yaml.SafeLoader)

    config = load(_without_hooks(tmp_path / "mkdocs.yml").read_text(encoding="utf-8"))
    assert config["hooks"] == []
    names = [next(iter(p)) if isinstance(p, dict) else p for p in config["plugins"]]
    assert names == ["search", "i18n"]
    assert "translation-status.md" not in config["nav"]
    assert config["docs_dir"] == "docs-plain"  # docs/ and the pages hooks generate (next test)
    # everything else as the site has it: the same Markdown extensions, theme, assets
    original = load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    for key in ("hooks", "plugins", "nav", "docs_dir"):
        original.pop(key), config.pop(key)
    assert config == original


def test_the_benchs_plain_floor_has_every_page_the_hooks_generate(tmp_path):
    """The plain build renders the pages the hooked build has: docs/ and one Markdown page
    per program page (``programs/<lesson>/<program>.md``, not indexed, as the hook makes
    them), with each file the page offers."""
    import shutil

    from coursekit.bench import _plain_docs
    from coursekit.gate import shown_programs
    from coursekit.programs import program

    for item in ("docs", "snippets"):
        shutil.copytree(ROOT / item, tmp_path / item)
    plain = _plain_docs(tmp_path)
    docs = {p.relative_to(ROOT / "docs") for p in (ROOT / "docs").rglob("*") if p.is_file()}
    pages = {p.relative_to(ROOT / "docs").as_posix(): p.read_text(encoding="utf-8")
             for p in (ROOT / "docs").glob("*.md")}
    programs = [program(name, ROOT / "snippets") for name in shown_programs(pages, ROOT / "snippets")]
    assert len(programs) > 30
    generated = {Path(prog.page) for prog in programs}
    generated |= {Path(d) for prog in programs for d in prog.downloads}
    generated |= {Path(prog.bundle) for prog in programs if prog.bundle}
    assert {p.relative_to(plain) for p in plain.rglob("*") if p.is_file()} == docs | generated
    page = (plain / programs[0].page).read_text(encoding="utf-8")
    assert page.startswith("---\nhide:\n  - navigation\nsearch:\n  exclude: true\n---\n")
    assert f'--8<-- "{programs[0].name}"' in page and "{ #" not in page


def test_course_bench_keeps_earlier_runs_and_shows_each_figures_last_value(tmp_path):
    """bench.json keeps the last runs (newest first, at most HISTORY), and the table puts
    each figure's minimum of the newest earlier run beside it."""
    import json

    from coursekit.bench import HISTORY, _history, _table

    versions = {"cores": 2, "machine": "x86_64", "python": "3.11", "torch": "2.13.0", "mkdocs": "1.6.1",
                "mkdocs-material": "9.8.2", "mkdocs-static-i18n": "1.3.1"}

    def run(when: str, cold: float) -> dict:
        stat = {"min": cold, "median": cold, "runs": 1}
        return {"versions": versions, "when": when, "build": {
            "cold_s": stat, "warm_s": stat, "without_hooks_s": stat, "cold_ratio": cold, "warm_ratio": 1.0,
            "aim_cold_ratio": 1.5, "aim_warm_ratio": 1.15}}

    path = tmp_path / "bench.json"
    assert _history(path) == []
    older = [run(f"2026-11-{day:02d}T00:00:00Z", 9.0 + day) for day in range(1, 2 * HISTORY)]
    path.write_text(json.dumps({**run("2026-12-01T00:00:00Z", 5.25), "history": older}), encoding="utf-8")
    history = _history(path)
    assert len(history) == HISTORY and history[0]["when"] == "2026-12-01T00:00:00Z" and "history" not in history[0]
    table = _table(run("2026-12-06T00:00:00Z", 4.5), history)
    cold = next(line for line in table.splitlines() if line.startswith("build, 5 languages, hooks, cold"))
    assert "4.50" in cold and "5.25 (2026-12-01)" in cold
