"""A reader gets the whole verified program from a lesson: in a real browser, from every
lesson in every language, the title of a code block leads to the program's page, its files
download byte for byte as the record verified them, and the page's command runs them.

The command runs as a reader runs it (``torchjob.run_bare``: a fresh folder holding only the
downloaded files, the reader's environment, no harness). It runs once per program: the
other languages' pages give the same bytes (the same SHA-256, checked) and the same
command (checked), so running them again would prove nothing more.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from conftest import LANGUAGES, ROOT
from coursekit.runspec import parse_line, read_spec
from coursekit.verification import load_records, status
from test_reader_site import LESSON, PROJECT, _open, _url, browser, hosted, page, server  # noqa: F401  fixtures

pytestmark = [pytest.mark.browser, pytest.mark.torchrun]

SNIPPETS = ROOT / "snippets"
LESSONS = [p.with_suffix("").as_posix() for p in PROJECT.pages()
           if "--8<--" in (PROJECT.docs_dir / p).read_text(encoding="utf-8")]
_ran: dict[tuple[str, str], str] = {}  # (program, command) -> SHA-256 of what ran, across languages


def _runnable(program: str) -> bool:
    """A program one terminal runs to a clean exit on this machine: ``--standalone``, no
    GPU, no Slurm, no fixed port another job could hold."""
    spec = read_spec(SNIPPETS / program)
    line = spec.lines[0]
    return (spec.outcome == "passes" and not spec.cuda_gpus and len(spec.lines) == 1 and line.submits is None
            and "--standalone" in line.argv and not any(a.startswith("--master-port") for a in line.argv))


def _program_of(url: str) -> str:
    """``ddp_basics/train.py`` for ``…/programs/ddp_basics/train/``."""
    lesson, stem = url.rstrip("/").split("/programs/", 1)[1].split("/")
    return f"{lesson}/{stem}.py"


def test_lessons_offer_programs():
    assert LESSONS and LESSON in LESSONS


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_block_title_gives_the_verified_program_and_its_command_runs_it(server, page, language, tmp_path):
    from torchjob import run_bare

    records = load_records(SNIPPETS)
    for lesson in LESSONS:
        _open(page, _url(server, language, lesson))
        links = page.locator("article span.filename a.course-program-link")
        hrefs = links.evaluate_all("links => links.map(a => a.href)")
        assert hrefs, f"{language}/{lesson}: no code block title leads to a program"
        index = next((i for i, href in enumerate(hrefs) if _runnable(_program_of(href))), None)
        assert index is not None, f"{language}/{lesson}: no block of a program runnable here"
        links.nth(index).click()
        page.wait_for_url("**/programs/**")
        program = _program_of(page.url)
        prefix = "" if language == PROJECT.default_language else f"{language}/"
        assert f"/{prefix}programs/" in page.url, f"{language}/{lesson}: left the language for {page.url}"
        folder = tmp_path / lesson / Path(program).stem
        folder.mkdir(parents=True)
        verified = {name: digest for rec in status(program, SNIPPETS, records).current.values()
                    for name, digest in rec.files.items()}
        downloads = page.locator("article a.course-download:not([download$='.zip'])")
        assert downloads.count() >= 1, f"{language} {program}: nothing to download"
        for i in range(downloads.count()):
            with page.expect_download() as info:
                downloads.nth(i).click()
            name = info.value.suggested_filename
            info.value.save_as(folder / name)
            digest = hashlib.sha256((folder / name).read_bytes()).hexdigest()
            assert verified.get(f"{Path(program).parent}/{name}") == digest, (
                f"{language} {program}: downloaded {name} has SHA-256 {digest}; the record has "
                f"{verified.get(f'{Path(program).parent}/{name}')}")
        command = page.locator("article .language-bash code").first.inner_text().strip()
        assert command == read_spec(SNIPPETS / program).lines[0].text, f"{language} {program}: the page's command"
        digests = "".join(sorted(hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.iterdir()))
        if (program, command) in _ran:
            assert _ran[(program, command)] == digests, f"{language} {program}: other bytes than the run ones"
            continue
        result = run_bare(parse_line(command), folder, read_spec(SNIPPETS / program).time_limit_s)
        result.check_exit()
        _ran[(program, command)] = digests
