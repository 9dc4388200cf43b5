from __future__ import annotations

import sys

from pytest_agentgate.cli.main import main

sys.exit(main())
