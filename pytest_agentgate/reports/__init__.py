"""Pure report parsers: bytes on disk in, measured evidence out. No thresholds live here."""
