"""adk-temporal."""
