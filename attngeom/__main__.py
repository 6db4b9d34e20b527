"""``python -m attngeom ...``: the ``attngeom`` command (:func:`attngeom.cli.main`)."""

from attngeom.cli import main

main()
