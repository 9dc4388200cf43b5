"""The harness stop hooks door (Claude Code, Codex, Gemini CLI, Copilot CLI, Cursor): reads the
hook event, gates the project through the one pipeline, answers in the harness's protocol.

Empty until that door is built; docs/ARCHITECTURE.md says how to add a door.
"""
