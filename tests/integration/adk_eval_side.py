"""Run in the google-adk environment: ADK's own eval code on the parity test's inputs.

Usage: python adk_eval_side.py DEPS_DIR INPUT_JSON. DEPS_DIR holds rouge-score (ADK's eval
extra), appended to the path so the environment's own packages win. Prints JSON: each
eval set file parsed by ADK's ``EvalSet`` (its case ids and turn counts), ADK's ROUGE-1
scores of the text pairs, and ADK's trajectory scores of the call pairs.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.append(sys.argv[1])

from google.adk.evaluation.eval_case import IntermediateData, Invocation
from google.adk.evaluation.eval_metrics import EvalMetric, ToolTrajectoryCriterion
from google.adk.evaluation.eval_set import EvalSet
from google.adk.evaluation.final_response_match_v1 import RougeEvaluator
from google.adk.evaluation.trajectory_evaluator import TrajectoryEvaluator
from google.genai import types


def _turn(text: str, calls: list[dict[str, Any]]) -> Invocation:
    return Invocation(
        user_content=types.Content(role="user", parts=[types.Part(text="q")]),
        final_response=types.Content(role="model", parts=[types.Part(text=text)]),
        intermediate_data=IntermediateData(
            tool_uses=[types.FunctionCall(name=c["name"], args=c["args"]) for c in calls]
        ),
    )


def main() -> None:
    given = json.loads(Path(sys.argv[2]).read_text(encoding="utf-8"))
    parsed = {}
    for path in given["eval_sets"]:
        eval_set = EvalSet.model_validate_json(Path(path).read_text(encoding="utf-8"))
        parsed[path] = {c.eval_id: len(c.conversation or []) for c in eval_set.eval_cases}
    rouge = RougeEvaluator(EvalMetric(metric_name="response_match_score", threshold=0.5))
    rouge_scores = [
        rouge.evaluate_invocations([_turn(c, [])], [_turn(r, [])]).overall_score
        for c, r in given["texts"]
    ]
    trajectory_scores = []
    for case in given["trajectories"]:
        criterion = ToolTrajectoryCriterion(
            threshold=1.0, match_type=case["match_type"], ignore_args=case["ignore_args"]
        )
        metric = EvalMetric(metric_name="tool_trajectory_avg_score", criterion=criterion)
        result = TrajectoryEvaluator(eval_metric=metric).evaluate_invocations(
            [_turn("", case["actual"])], [_turn("", case["expected"])]
        )
        trajectory_scores.append(result.overall_score)
    print(json.dumps({"parsed": parsed, "rouge": rouge_scores, "trajectory": trajectory_scores}))


main()
