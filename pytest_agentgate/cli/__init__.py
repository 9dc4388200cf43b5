"""The ``agentgate`` command line: :mod:`.main` assembles the parser and maps errors and verdicts
to exit codes; each subcommand has its own module with ``add_parser`` and ``run``."""
