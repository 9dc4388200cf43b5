"""The integrity check: what the change did to the tests, the configuration and the evidence.

See :mod:`pytest_agentgate.integrity.model` for the findings and rules, and
:mod:`pytest_agentgate.gates.integrity` for the gate that reports them.
"""
