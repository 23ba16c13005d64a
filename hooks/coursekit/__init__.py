"""coursekit: the library behind the course site's MkDocs hooks and its command line.

Modules, one job each:

* :mod:`coursekit.segment`       -- cut an English page into messages with source spans;
* :mod:`coursekit.render`        -- splice a catalog's translations back into a page;
* :mod:`coursekit.safety`        -- accept a translation only if it renders to its msgid's structure;
* :mod:`coursekit.skeleton`      -- the element skeleton of rendered HTML, text left out;
* :mod:`coursekit.fuzz_safety`   -- fuzzing the safety check against the site's engine (tests, bench);
* :mod:`coursekit.fuzz`          -- the differential fuzzer of the segmenter (tests, bench);
* :mod:`coursekit.syntax`        -- where Python-Markdown and the extensions read block syntax;
* :mod:`coursekit.anchors`       -- heading anchors kept from the English page;
* :mod:`coursekit.catalog`       -- read, write and merge gettext catalogs (polib);
* :mod:`coursekit.catalog_file`  -- whether a path is a catalog file to read or write, and its bytes;
* :mod:`coursekit.catalog_header` -- a catalog's header as the build uses it (charset, Plural-Forms);
* :mod:`coursekit.extract`       -- extract messages and update every catalog;
* :mod:`coursekit.check`         -- validate catalogs (``course check``);
* :mod:`coursekit.stats`         -- translation progress (``course stats``);
* :mod:`coursekit.interface`     -- interface strings (badges, notices, quick checks);
* :mod:`coursekit.notice`        -- the incomplete-translation notice;
* :mod:`coursekit.status_page`   -- the generated translation status page;
* :mod:`coursekit.runspec`       -- how a snippet program is launched (its docstring);
* :mod:`coursekit.verification`  -- content-bound verification records;
* :mod:`coursekit.gate`          -- badges under code blocks and the publish gate;
* :mod:`coursekit.project`       -- where pages, catalogs and languages are (mkdocs.yml);
* :mod:`coursekit.markdown_engine` -- the site's Python-Markdown with its mkdocs.yml extensions;
* :mod:`coursekit.build_context` -- the project and language an MkDocs build is on;
* :mod:`coursekit.bench`         -- ``course bench``: build and verification costs;
* :mod:`coursekit.cli`           -- the ``course`` command translators and maintainers run.
"""
