"""ROUGE-1 as ADK's ``response_match_score`` computes it.

google-adk 2.13 (``evaluation/final_response_match_v1.py``) scores the final response with
``rouge_score``'s ROUGE-1 F-measure, after its own Unicode-aware tokenizer: NFKC and lower
case; CJK characters one token each; Thai, Lao, Khmer and Myanmar split into clusters of a
base character and its combining marks; other letters, digits and combining marks kept
together; everything else a separator; ASCII words then go through rouge_score's default
tokenizer with the Porter stemmer. The same library (the ``eval`` extra) does the counting
here, so the values are ADK's to the last digit (``tests/integration/test_eval_adk_parity.py``
compares them with ADK's own evaluator).
"""

from __future__ import annotations

import functools
import unicodedata
from typing import Any

from ..extras import needs_extra

__all__ = ["rouge1_fmeasure", "tokenize"]

_CJK = ((0x4E00, 0x9FFF), (0x3040, 0x309F), (0x30A0, 0x30FF), (0xAC00, 0xD7AF))
_NON_SPACED = ((0x0E00, 0x0E7F), (0x0E80, 0x0EFF), (0x1780, 0x17FF), (0x1000, 0x109F))


def _within(char: str, ranges: tuple[tuple[int, int], ...]) -> bool:
    code = ord(char)
    return any(low <= code <= high for low, high in ranges)


def _is_mark(char: str) -> bool:
    return unicodedata.category(char).startswith("M")


class _Tokenizer:
    """ADK's ``_UnicodeAwareTokenizer`` (use_stemmer=True), over rouge_score's tokenizer."""

    def __init__(self) -> None:
        with needs_extra("eval", "response_match_score"):
            from rouge_score import tokenizers

        self._ascii = tokenizers.DefaultTokenizer(use_stemmer=True)

    def tokenize(self, text: str) -> list[str]:
        """The tokens ADK's scorer counts."""
        spaced: list[str] = []
        for char in unicodedata.normalize("NFKC", text).lower():
            if _within(char, _CJK):
                spaced += [" ", char, " "]
            elif _within(char, _NON_SPACED):
                # A combining mark stays with its base character; a base starts a cluster.
                spaced += [char] if _is_mark(char) else [" ", char]
            elif char.isalnum() or _is_mark(char):
                spaced.append(char)
            else:
                spaced.append(" ")
        tokens: list[str] = []
        for word in "".join(spaced).split():
            tokens += self._ascii.tokenize(word) if word.isascii() else [word]
        return tokens


@functools.cache
def _tokenizer() -> _Tokenizer:
    return _Tokenizer()


@functools.cache
def _scorer() -> Any:
    with needs_extra("eval", "response_match_score"):
        from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(["rouge1"], tokenizer=_tokenizer())


def tokenize(text: str) -> list[str]:
    """The tokens ADK's ROUGE-1 counts in ``text``.

    Raises:
        MissingExtraError: ``rouge-score`` (the ``eval`` extra) is not installed.
    """
    return _tokenizer().tokenize(text)


def rouge1_fmeasure(candidate: str, reference: str) -> float:
    """ROUGE-1 F-measure of ``candidate`` against ``reference``, as ADK scores a response.

    Raises:
        MissingExtraError: ``rouge-score`` (the ``eval`` extra) is not installed.
    """
    score: float = _scorer().score(reference, candidate)["rouge1"].fmeasure
    return score
