"""The Temporal adapter over the steps: each activity reads Temporal's context and calls one.

The steps themselves (``adk_temporal.steps``) are engine-neutral; what is Temporal's — the
workflow id, the attempt number, heartbeats and mapping errors to retry semantics — is here.
"""
