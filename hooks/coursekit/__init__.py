"""coursekit: the library behind the course site's MkDocs hooks and its command line.

Modules, one job each:

* :mod:`coursekit.segment`  -- cut an English page into messages with source spans;
* :mod:`coursekit.render`   -- splice a catalog's translations back into a page;
* :mod:`coursekit.catalog`  -- read, write and merge gettext catalogs (polib);
* :mod:`coursekit.project`  -- where pages, catalogs and languages are (mkdocs.yml);
* :mod:`coursekit.cli`      -- the ``course`` command translators and maintainers run.
"""
