"""The segmenter's properties with the course's own Markdown engine (its mkdocs.yml)."""
from __future__ import annotations

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
    # everything else as the site has it: the same Markdown extensions, theme, assets
    original = load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    for key in ("hooks", "plugins", "nav"):
        original.pop(key), config.pop(key)
    assert config == original
