"""ADK's two reference metrics, per turn and over a conversation.

* ``tool_trajectory_avg_score`` (google-adk 2.13 ``evaluation/trajectory_evaluator.py``):
  a turn scores 1.0 when its tool calls match the expected ones, else 0.0 — ``EXACT``
  (same calls, same order, nothing more), ``IN_ORDER`` (the expected calls appear in order,
  others may come between) or ``ANY_ORDER`` (each expected call appears, each actual call
  used once); names must be equal and, unless ``ignore_args``, the argument dicts too.
* ``response_match_score`` (``final_response_match_v1.py``): the ROUGE-1 F-measure of the
  final response's text (its text parts joined by newlines) against the expected one's.

A metric's score over a conversation is the mean of its turns' scores; a turn, and the
whole, pass when the score is at least the threshold (``_get_eval_status``). A case passes
when no metric fails (``local_eval_service._generate_final_eval_status``).
"""

from __future__ import annotations

import enum
from collections.abc import Sequence

from google.genai import types
from pydantic import BaseModel

from .criteria import RESPONSE_MATCH_SCORE, TOOL_TRAJECTORY_AVG_SCORE, Criterion, MatchType
from .evalsets import Invocation, tool_calls
from .rouge import rouge1_fmeasure

__all__ = [
    "EvalStatus",
    "MetricResult",
    "case_status",
    "evaluate_metric",
    "response_text",
    "trajectory_matches",
]


class EvalStatus(enum.StrEnum):
    """A verdict, as ADK names them."""

    PASSED = "PASSED"
    FAILED = "FAILED"
    NOT_EVALUATED = "NOT_EVALUATED"


class MetricResult(BaseModel):
    """One metric over one case: the mean score, the verdict, and each turn's score."""

    metric_name: str
    threshold: float
    score: float | None
    eval_status: EvalStatus
    per_invocation: list[float]


def _same(actual: types.FunctionCall, expected: types.FunctionCall, ignore_args: bool) -> bool:
    return actual.name == expected.name and (ignore_args or actual.args == expected.args)


def _exact(
    actual: Sequence[types.FunctionCall], expected: Sequence[types.FunctionCall], ignore: bool
) -> bool:
    return len(actual) == len(expected) and all(
        _same(a, e, ignore) for a, e in zip(actual, expected, strict=True)
    )


def _in_order(
    actual: Sequence[types.FunctionCall], expected: Sequence[types.FunctionCall], ignore: bool
) -> bool:
    remaining = iter(expected)
    wanted = next(remaining, None)
    for call in actual:
        if wanted is not None and _same(call, wanted, ignore):
            wanted = next(remaining, None)
    return wanted is None


def _any_order(
    actual: Sequence[types.FunctionCall], expected: Sequence[types.FunctionCall], ignore: bool
) -> bool:
    left = list(actual)
    for wanted in expected:
        found = next((i for i, call in enumerate(left) if _same(call, wanted, ignore)), None)
        if found is None:
            return False
        left.pop(found)
    return True


_MATCHERS = {
    MatchType.EXACT: _exact,
    MatchType.IN_ORDER: _in_order,
    MatchType.ANY_ORDER: _any_order,
}


def trajectory_matches(
    actual: Sequence[types.FunctionCall],
    expected: Sequence[types.FunctionCall],
    criterion: Criterion,
) -> bool:
    """Whether ``actual`` calls match ``expected`` under the criterion's match type."""
    return _MATCHERS[criterion.match_type](actual, expected, criterion.ignore_args)


def response_text(content: types.Content | None) -> str:
    """The text ADK compares: the content's text parts joined by newlines."""
    if content is None or not content.parts:
        return ""
    return "\n".join(part.text for part in content.parts if part.text)


def _turn_score(name: str, actual: Invocation, expected: Invocation, criterion: Criterion) -> float:
    if name == TOOL_TRAJECTORY_AVG_SCORE:
        calls, wanted = tool_calls(actual.intermediate_data), tool_calls(expected.intermediate_data)
        return 1.0 if trajectory_matches(calls, wanted, criterion) else 0.0
    if name == RESPONSE_MATCH_SCORE:
        return rouge1_fmeasure(
            response_text(actual.final_response), response_text(expected.final_response)
        )
    raise ValueError(f"metric {name!r} is not computed here")


def evaluate_metric(
    name: str,
    criterion: Criterion,
    actual: Sequence[Invocation],
    expected: Sequence[Invocation],
) -> MetricResult:
    """Score metric ``name`` over a conversation, turn by turn.

    Args:
        name: ``tool_trajectory_avg_score`` or ``response_match_score``.
        criterion: Its threshold (and match type).
        actual: The turns as the agent ran them.
        expected: The eval case's turns, as many as ``actual``.

    Raises:
        ValueError: The metric is unknown, or the turn counts differ (ADK's
            ``_validate_invocation_lengths``).
    """
    if len(actual) != len(expected):
        raise ValueError(
            f"actual and expected invocations must have the same length; got {len(actual)} "
            f"and {len(expected)}"
        )
    scores = [_turn_score(name, a, e, criterion) for a, e in zip(actual, expected, strict=True)]
    if not scores:
        return MetricResult(
            metric_name=name,
            threshold=criterion.threshold,
            score=None,
            eval_status=EvalStatus.NOT_EVALUATED,
            per_invocation=[],
        )
    overall = sum(scores) / len(scores)
    passed = overall >= criterion.threshold
    return MetricResult(
        metric_name=name,
        threshold=criterion.threshold,
        score=overall,
        eval_status=EvalStatus.PASSED if passed else EvalStatus.FAILED,
        per_invocation=scores,
    )


def case_status(results: Sequence[MetricResult]) -> EvalStatus:
    """A case's verdict: failed when a metric failed, passed when one passed and none
    failed, else not evaluated (ADK's ``_generate_final_eval_status``)."""
    status = EvalStatus.NOT_EVALUATED
    for result in results:
        if result.eval_status is EvalStatus.FAILED:
            return EvalStatus.FAILED
        if result.eval_status is EvalStatus.PASSED:
            status = EvalStatus.PASSED
    return status
