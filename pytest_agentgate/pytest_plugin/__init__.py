"""``pytest --agentgate``: :mod:`.entry` (the ``pytest11`` entry point), :mod:`.session` (inside
pytest), :mod:`.gate_process` (the engine's side) and :mod:`.witness` (in a pytest agentgate runs).
"""
