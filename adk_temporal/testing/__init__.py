"""Test helpers shipped with the package: real local servers for Temporal, GCS and Gemini."""
