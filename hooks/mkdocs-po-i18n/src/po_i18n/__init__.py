"""po_i18n: translate an MkDocs site with gettext catalogs, one message per block, every
translation accepted only when it renders to its English's structure.

The MkDocs plugin (:mod:`po_i18n.plugin`, ``plugins: - po-i18n``) and the command line
(:mod:`po_i18n.cli`, ``po-i18n``) are thin wrappers over modules with one job each:

* :mod:`po_i18n.segment`         -- cut an English page into messages with source spans;
* :mod:`po_i18n.render`          -- splice a catalog's translations back into a page (pure);
* :mod:`po_i18n.safety`          -- accept a translation only if it renders to its msgid's structure;
* :mod:`po_i18n.page_guard`      -- the same, for a page's translations together;
* :mod:`po_i18n.skeleton`        -- the element skeleton of rendered HTML, text left out;
* :mod:`po_i18n.invisible`       -- characters that change what a reader sees unseen;
* :mod:`po_i18n.syntax`          -- where Python-Markdown and the extensions read block syntax;
* :mod:`po_i18n.html_blocks`     -- where the engine finds raw HTML, and Markdown in HTML;
* :mod:`po_i18n.anchors`         -- heading anchors kept from the English page;
* :mod:`po_i18n.markdown_engine` -- the site's Python-Markdown with its mkdocs.yml extensions;
* :mod:`po_i18n.catalog`         -- read, write and merge gettext catalogs (polib);
* :mod:`po_i18n.catalog_file`    -- whether a path is a catalog file to read or write, and its bytes;
* :mod:`po_i18n.catalog_header`  -- a catalog's header as the build uses it (charset, Plural-Forms);
* :mod:`po_i18n.extract`         -- extract messages and update every catalog;
* :mod:`po_i18n.typo`            -- whether a changed msgid is only a typo fix (the rule);
* :mod:`po_i18n.keep`            -- keep typo-fixed messages current (``update --keep-translations``);
* :mod:`po_i18n.check`           -- validate catalogs (``po-i18n check``);
* :mod:`po_i18n.stats`           -- translation progress (``po-i18n stats``);
* :mod:`po_i18n.interface`       -- interface strings (notices, status page) and their catalogs;
* :mod:`po_i18n.notice`          -- the incomplete-translation notice;
* :mod:`po_i18n.status_page`     -- the generated translation status page;
* :mod:`po_i18n.search`          -- one search index per language, and its worker (Material);
* :mod:`po_i18n.project`         -- where pages, catalogs and languages are (mkdocs.yml);
* :mod:`po_i18n.config`          -- the plugin's options in mkdocs.yml;
* :mod:`po_i18n.build_context`   -- the project and language an MkDocs build is on;
* :mod:`po_i18n.filecache`       -- values computed from files, kept until they change;
* :mod:`po_i18n.verdicts`        -- the safety check's verdicts kept on disk between builds;
* :mod:`po_i18n.prejudge`        -- a cold build's verdicts computed on every core;
* :mod:`po_i18n.includes`        -- the digest of what a page includes (part of verdict keys);
* :mod:`po_i18n.catalog_cache`   -- parsed catalogs kept on disk by the digest of their bytes;
* :mod:`po_i18n.highlight_memo`  -- each code block highlighted once per process, not per language;
* :mod:`po_i18n.dirty`           -- which pages a dirty ``mkdocs serve`` rebuild renders again;
* :mod:`po_i18n.preview`         -- what the preview marks (fuzzy, untranslated) and its place keeper;
* :mod:`po_i18n.fuzz`, :mod:`po_i18n.fuzz_safety` -- differential fuzzers (test extra).
"""

__version__ = "0.1.0"
