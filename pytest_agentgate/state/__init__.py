"""What agentgate remembers between verdicts: attempts, escalation reports, blockers, history.

:mod:`.storage` is where (the project's ``.agentgate/`` and the user's copy), :mod:`.ledger` what
is decided from it. See docs/ARCHITECTURE.md.
"""
