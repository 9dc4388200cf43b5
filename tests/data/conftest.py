# tests/data holds sample projects whose tests fail on purpose (they produce the
# reports next to them). Never collect them as part of agentgate's own test suite.
collect_ignore_glob = ["*"]
