"""Renderers of one Verdict: continuation text for the agent, terminal and markdown for humans."""
