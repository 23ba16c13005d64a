"""coursekit: what only the course needs, behind its MkDocs hooks and its ``course`` command.

The translation engine is a package of its own (``hooks/mkdocs-po-i18n/``, imported as
``po_i18n``), used through its MkDocs plugin like any site would use it. Modules, one job each:

* :mod:`coursekit.runspec`        -- how a snippet program is launched (its docstring);
* :mod:`coursekit.verification`   -- content-bound verification records;
* :mod:`coursekit.gate`           -- badges under code blocks and the publish gate;
* :mod:`coursekit.course_strings` -- the course's interface strings (``i18n/<lang>/_course.po``);
* :mod:`coursekit.sections`       -- each h2 section's body in its own element (Markdown extension);
* :mod:`coursekit.page_scripts`   -- scripts run after the first paint;
* :mod:`coursekit.site_address`   -- links that work at any address and sub-path;
* :mod:`coursekit.net`            -- local network helpers for tools that start servers and jobs;
* :mod:`coursekit.bench`          -- ``course bench``: build and verification costs;
* :mod:`coursekit.cli`            -- the ``course`` command (``course bench``).
"""
