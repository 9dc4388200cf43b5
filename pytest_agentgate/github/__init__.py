"""The GitHub Action's door: gates a pull request through the one pipeline and writes the job
summary, annotations, outputs and the PR comment (where a PR's attempts are kept).

Empty until that door is built; docs/ARCHITECTURE.md says how to add a door.
"""
