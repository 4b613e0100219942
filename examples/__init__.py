"""Example agents, installed as ``adk_temporal.examples`` so ``adk-temporal demo`` can run them."""
