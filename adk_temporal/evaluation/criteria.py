"""ADK's eval criteria: ``test_config.json``, its defaults, and the metrics run here.

As google-adk 2.13's ``eval_config.py``: a config maps metric names to a threshold or to a
criterion object (``{"threshold": ..., "matchType": "IN_ORDER", "ignoreArgs": true}`` for
the tool trajectory); ``adk eval`` reads ``test_config.json`` beside a single eval set file
(``cli_tools_click._resolve_eval_config_file_path``), else uses the defaults
``tool_trajectory_avg_score: 1.0`` and ``response_match_score: 0.8``.

Two metrics are computed here, exactly as ADK computes them: ``tool_trajectory_avg_score``
and ``response_match_score``. The others need a judge model or Vertex AI; a config naming
one is refused before anything runs, rather than passing a case nobody judged.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic.alias_generators import to_camel

from .evalsets import EvalSetError

__all__ = [
    "DEFAULT_CRITERIA",
    "RESPONSE_MATCH_SCORE",
    "SUPPORTED_METRICS",
    "TOOL_TRAJECTORY_AVG_SCORE",
    "Criterion",
    "MatchType",
    "config_path_for",
    "load_criteria",
]

TOOL_TRAJECTORY_AVG_SCORE = "tool_trajectory_avg_score"
"""ADK's metric: the share of turns whose tool calls match the expected ones."""
RESPONSE_MATCH_SCORE = "response_match_score"
"""ADK's metric: ROUGE-1 F-measure of the final response against the expected one."""
SUPPORTED_METRICS = (TOOL_TRAJECTORY_AVG_SCORE, RESPONSE_MATCH_SCORE)
"""The metrics ``adk-temporal eval`` computes."""


class MatchType(enum.Enum):
    """How tool calls are matched (ADK's ``ToolTrajectoryCriterion.MatchType``)."""

    EXACT = 0
    IN_ORDER = 1
    ANY_ORDER = 2


class Criterion(BaseModel):
    """One metric's criterion: its threshold, and for the trajectory how calls match."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow")

    threshold: float
    match_type: MatchType = MatchType.EXACT
    ignore_args: bool = False

    @field_validator("match_type", mode="before")
    @classmethod
    def _coerce_match_type(cls, value: object) -> object:
        # ADK's _coerce_match_type: names in any case, "-" or " " for "_"; values as they are.
        if isinstance(value, str):
            normalized = value.strip().upper().replace("-", "_").replace(" ", "_")
            if normalized in MatchType.__members__:
                return MatchType[normalized]
        return value


DEFAULT_CRITERIA: Mapping[str, Criterion] = {
    TOOL_TRAJECTORY_AVG_SCORE: Criterion(threshold=1.0),
    RESPONSE_MATCH_SCORE: Criterion(threshold=0.8),
}
"""What ADK evaluates without a config (``eval_config._DEFAULT_EVAL_CONFIG``)."""


class _EvalConfig(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)

    criteria: dict[str, float | Criterion] = Field(default_factory=dict)


def config_path_for(eval_set_files: Sequence[Path]) -> Path | None:
    """``test_config.json`` beside the eval set file when exactly one is evaluated."""
    if len(set(eval_set_files)) != 1:
        return None
    return eval_set_files[0].parent / "test_config.json"


def load_criteria(path: Path | None) -> dict[str, Criterion]:
    """The criteria of ``path``, or ADK's defaults when it is ``None`` or does not exist.

    Raises:
        EvalSetError: The file is not a valid config, or names a metric not computed here.
    """
    if path is None or not path.exists():
        return dict(DEFAULT_CRITERIA)
    try:
        config = _EvalConfig.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (json.JSONDecodeError, ValidationError, OSError) as err:
        raise EvalSetError(f"{path} is not a valid eval config: {err}") from err
    criteria = {
        name: value if isinstance(value, Criterion) else Criterion(threshold=value)
        for name, value in config.criteria.items()
    }
    unsupported = sorted(set(criteria) - set(SUPPORTED_METRICS))
    if unsupported:
        raise EvalSetError(
            f"{path} asks for {', '.join(unsupported)}, which adk-temporal eval does not "
            f"compute (it computes {', '.join(SUPPORTED_METRICS)}); run those with ADK's "
            "`adk eval`, or remove them from the criteria"
        )
    return criteria


def describe(criteria: Mapping[str, Criterion]) -> dict[str, Any]:
    """The criteria as JSON, for reports."""
    return {name: c.model_dump(mode="json") for name, c in criteria.items()}
