"""Gate kinds: evidence plus thresholds in, one GateResult out."""
