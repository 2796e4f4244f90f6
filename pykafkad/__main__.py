"""``python -m pykafkad`` runs the command line."""

from pykafkad.cli import main

raise SystemExit(main())
