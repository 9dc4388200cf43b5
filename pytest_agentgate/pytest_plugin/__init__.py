"""``pytest --agentgate``: :mod:`.entry` (the ``pytest11`` entry point), :mod:`.session` (inside
pytest), :mod:`.gate_process` (the engine's side), :mod:`.witness` (in a pytest agentgate runs)
and :mod:`.count` (in the collection of a base commit's suite that agentgate runs).
"""
