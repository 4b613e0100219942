"""ADK's eval formats and metrics as ported (``adk_temporal.evaluation``): google-adk 2.13's
``trajectory_evaluator.py``, ``final_response_match_v1.py``, ``eval_config.py`` and
``local_eval_sets_manager.py``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from google.genai import types

from adk_temporal.evaluation import (
    Criterion,
    EvalSetError,
    EvalStatus,
    Invocation,
    MatchType,
    evaluate_metric,
    load_criteria,
    load_eval_set,
    rouge1_fmeasure,
)
from adk_temporal.evaluation.evalsets import IntermediateData, parse_eval_set_arg
from adk_temporal.evaluation.metrics import trajectory_matches
from adk_temporal.evaluation.rouge import tokenize


def _call(name: str, **args: object) -> types.FunctionCall:
    return types.FunctionCall(name=name, args=args)


T1, T2, T3, T4 = _call("t1", a=1), _call("t2"), _call("t3", x="y"), _call("t4")


@pytest.mark.parametrize(
    ("match", "actual", "expected", "matches"),
    [
        (MatchType.EXACT, [T1, T2], [T1, T2], True),
        (MatchType.EXACT, [T2, T1], [T1, T2], False),
        (MatchType.EXACT, [T1, T2, T3], [T1, T2], False),
        (MatchType.IN_ORDER, [T1, T4, T2, T3], [T1, T2, T3], True),
        (MatchType.IN_ORDER, [T1, T2, T3], [T1, T2, T3, T4], False),
        (MatchType.IN_ORDER, [T2, T1], [T1, T2], False),
        (MatchType.IN_ORDER, [], [], True),
        (MatchType.ANY_ORDER, [T2, T4, T1, T3], [T1, T2, T3], True),
        (MatchType.ANY_ORDER, [T1], [T1, T1], False),
        (MatchType.ANY_ORDER, [T1, T2], [], True),
    ],
)
def test_trajectory_match_types_follow_adk(
    match: MatchType,
    actual: list[types.FunctionCall],
    expected: list[types.FunctionCall],
    matches: bool,
) -> None:
    """EXACT, IN_ORDER and ANY_ORDER decide as ADK's docstring examples say."""
    assert trajectory_matches(actual, expected, Criterion(threshold=1, match_type=match)) is matches


def test_ignore_args_compares_names_only() -> None:
    """With ignore_args a call with other arguments still matches; without, it does not."""
    other = _call("t1", a=2)
    assert not trajectory_matches([other], [T1], Criterion(threshold=1))
    assert trajectory_matches([other], [T1], Criterion(threshold=1, ignore_args=True))


def _turn(text: str, calls: list[types.FunctionCall], answer: str) -> Invocation:
    return Invocation(
        user_content=types.Content(role="user", parts=[types.Part(text=text)]),
        final_response=types.Content(role="model", parts=[types.Part(text=answer)]),
        intermediate_data=IntermediateData(tool_uses=calls),
    )


def test_a_metric_is_the_mean_of_its_turns_against_the_threshold() -> None:
    """Two turns, one matching: score 0.5, failed against 1.0 and passed against 0.5."""
    actual = [_turn("a", [T1], "x"), _turn("b", [T2], "y")]
    expected = [_turn("a", [T1], "x"), _turn("b", [T3], "y")]
    strict = evaluate_metric(
        "tool_trajectory_avg_score", Criterion(threshold=1.0), actual, expected
    )
    assert (strict.score, strict.eval_status, strict.per_invocation) == (
        0.5,
        EvalStatus.FAILED,
        [1.0, 0.0],
    )
    lenient = evaluate_metric(
        "tool_trajectory_avg_score", Criterion(threshold=0.5), actual, expected
    )
    assert lenient.eval_status is EvalStatus.PASSED


def test_response_match_is_rouge1_f_with_the_porter_stemmer() -> None:
    """ROUGE-1 F over stemmed unigrams: 'rolled dice' and 'rolling dices' share both."""
    assert rouge1_fmeasure("I rolled the dice", "I rolled the dice") == 1.0
    assert rouge1_fmeasure("rolling dices", "rolled dice") == 1.0
    assert rouge1_fmeasure("", "anything") == 0.0
    assert rouge1_fmeasure("the cat sat", "the cat") == pytest.approx(0.8)


def test_the_tokenizer_keeps_non_latin_scripts_as_adk_does() -> None:
    """CJK characters are one token each, Thai clusters keep their marks, NFKC applies."""
    assert tokenize("東京は晴れ") == ["東", "京", "は", "晴", "れ"]
    assert tokenize("ﬁne Café") == ["fine", "café"]
    assert tokenize("กิน") == ["กิ", "น"]


def test_test_config_criteria_and_defaults(tmp_path: Path) -> None:
    """No config gives ADK's defaults; a config's numbers and criterion objects are read,
    match types by name in any spelling."""
    assert {k: v.threshold for k, v in load_criteria(None).items()} == {
        "tool_trajectory_avg_score": 1.0,
        "response_match_score": 0.8,
    }
    config = tmp_path / "test_config.json"
    config.write_text(
        json.dumps(
            {
                "criteria": {
                    "tool_trajectory_avg_score": {"threshold": 0.5, "matchType": "in-order"},
                    "response_match_score": 0.3,
                }
            }
        )
    )
    read = load_criteria(config)
    assert read["tool_trajectory_avg_score"].match_type is MatchType.IN_ORDER
    assert read["response_match_score"].threshold == 0.3


def test_a_metric_not_computed_here_is_refused(tmp_path: Path) -> None:
    """A criteria file naming a judge-model metric fails before anything runs, naming it."""
    config = tmp_path / "test_config.json"
    config.write_text(json.dumps({"criteria": {"final_response_match_v2": 0.5}}))
    with pytest.raises(EvalSetError, match="final_response_match_v2"):
        load_criteria(config)


def test_old_test_files_convert_as_adk_converts_them(tmp_path: Path) -> None:
    """A list of query/expected_tool_use/reference turns is one case named after the file."""
    path = tmp_path / "dice.test.json"
    path.write_text(
        json.dumps(
            [
                {
                    "query": "Roll a die",
                    "expected_tool_use": [{"tool_name": "roll_die", "tool_input": {"sides": 6}}],
                    "reference": "I rolled a 4.",
                }
            ]
        )
    )
    [case] = load_eval_set(path).eval_cases
    assert case.eval_id == str(path)
    [turn] = case.conversation or []
    assert isinstance(turn.intermediate_data, IntermediateData)
    assert turn.intermediate_data.tool_uses[0].args == {"sides": 6}


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("{not json", "is not JSON"),
        ('{"eval_set_id": "x"}', "eval_cases"),
        ('{"eval_set_id": "x", "eval_cases": [{"eval_id": "c"}]}', "conversation"),
    ],
)
def test_malformed_eval_sets_are_refused_with_the_problem(
    tmp_path: Path, text: str, problem: str
) -> None:
    """A file that is neither format fails with a typed error naming what is wrong."""
    path = tmp_path / "bad.evalset.json"
    path.write_text(text)
    with pytest.raises(EvalSetError, match=problem):
        load_eval_set(path)


def test_an_eval_set_argument_may_choose_cases() -> None:
    """``FILE:id1,id2`` chooses cases; a bare file runs them all."""
    assert parse_eval_set_arg("a.evalset.json:c1,c2") == (Path("a.evalset.json"), ["c1", "c2"])
    assert parse_eval_set_arg("a.evalset.json") == (Path("a.evalset.json"), [])
