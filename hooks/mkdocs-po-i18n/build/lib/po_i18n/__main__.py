"""``python -m po_i18n``: the po-i18n command line (:mod:`po_i18n.cli`)."""
import sys

from .cli import main

sys.exit(main())
