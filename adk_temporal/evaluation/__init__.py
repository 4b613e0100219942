"""Evaluating a change before it ships: ADK eval sets, captured sessions, replays.

Three workflows, engine-neutral (the in-process runner by default; the command runs eval
sets through Temporal workers with ``--on-temporal``):

* **ADK eval sets** (:mod:`.evalsets`, :mod:`.criteria`, :mod:`.metrics`, :mod:`.running`):
  ``*.evalset.json`` and old ``*.test.json`` files of google-adk 2.13 run as ``adk eval``
  runs them, scored with ADK's ``tool_trajectory_avg_score`` and ``response_match_score``
  against the thresholds of ``test_config.json``.
* **Capture** (:mod:`.capture`): recorded sessions written as an ADK eval set, so a real
  conversation becomes a regression case.
* **Counterfactual replay** (:mod:`.replay`): each recorded user turn re-run with a candidate
  (another model, instruction or app), every tool call answered from the record and never
  executed (:mod:`.served`), approvals and inputs answered as recorded, on in-memory copies
  of the stores; the report (:mod:`.report`, :mod:`.charts`) shows where each session
  diverged.
"""

from __future__ import annotations

from .candidate import CandidateChange, candidate_app
from .capture import SessionSelection, capture_eval_set, select_sessions
from .criteria import DEFAULT_CRITERIA, SUPPORTED_METRICS, Criterion, MatchType, load_criteria
from .evalsets import EvalCase, EvalSet, EvalSetError, Invocation, load_eval_set
from .metrics import EvalStatus, MetricResult, evaluate_metric
from .pricing import DEFAULT_PRICES, Price
from .replay import ReplayOptions, replay_sessions
from .report import Divergence, ReplayReport, SessionReplay, TurnReplay
from .rouge import rouge1_fmeasure
from .running import CaseResult, EvalEngine, EvalReport, in_process_engine, run_eval_set

__all__ = [
    "DEFAULT_CRITERIA",
    "DEFAULT_PRICES",
    "SUPPORTED_METRICS",
    "CandidateChange",
    "CaseResult",
    "Criterion",
    "Divergence",
    "EvalCase",
    "EvalEngine",
    "EvalReport",
    "EvalSet",
    "EvalSetError",
    "EvalStatus",
    "Invocation",
    "MatchType",
    "MetricResult",
    "Price",
    "ReplayOptions",
    "ReplayReport",
    "SessionReplay",
    "SessionSelection",
    "TurnReplay",
    "candidate_app",
    "capture_eval_set",
    "evaluate_metric",
    "in_process_engine",
    "load_criteria",
    "load_eval_set",
    "replay_sessions",
    "rouge1_fmeasure",
    "run_eval_set",
    "select_sessions",
]
