"""``python -m tablesvc`` is the same as the ``tablesvc`` command."""

from tablesvc.cli import main

raise SystemExit(main())
