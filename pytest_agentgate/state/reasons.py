"""The reasons an agent may give for a blocker (``agentgate block``), and what each means.

Kept apart from the ledger so that ``agentgate --help`` can list them without importing it.
"""

from __future__ import annotations

# The one list of blocker reasons: reason -> what it means, for the report and for `--help`.
HUMAN_ONLY_REASONS: dict[str, str] = {
    "needs_credentials": "needs credentials or secrets the agent does not have",
    "needs_permissions": "needs permissions the agent does not have",
    "needs_human_decision": "needs a decision only a human can make",
    "unsafe": "the agent judged the next step unsafe to take on its own",
}
RETRY_REASONS: dict[str, str] = {
    "transient": (
        "You reported a transient problem{detail}. Transient failures are not a reason to "
        "stop: retry the failing step now, and work around the problem if it persists."
    ),
    "insufficient_context": (
        "You reported missing context{detail}. Missing context is not a reason to stop: "
        "gather it yourself from the code, the tests, the documentation and the error output, "
        "then fix the failures."
    ),
}
BLOCK_REASONS: tuple[str, ...] = (*HUMAN_ONLY_REASONS, *RETRY_REASONS)
