"""Control characters from the data (NUL, a terminal's escapes) are never printed or paged raw.

The independent reference: a decoder written here, which reads the escapes back;
that it recovers every text proves no two texts print alike.
"""

import re
import unicodedata

import numpy as np
import pandas as pd
from hypothesis import given
from hypothesis import strategies as st

from fairkm.report import audit
from fairkm.utils._printable import visible

from ._people import make_people, run, write_table

# Texts rich in what matters: backslashes, "x", hex digits, controls of C0, DEL and C1.
TEXTS = st.text(alphabet=st.sampled_from(["\\", "x", "1", "b", "\x00", "\x1b", "\n", "\t",
                                          "\r", "\x7f", "\x85", "\x9f", "é", "["])
                | st.characters())


def _controls(text, allowed="\n"):
    return [c for c in text if unicodedata.category(c) == "Cc" and c not in allowed]


def _decode(shown, keep="\n"):
    """Read ``visible``'s output back: the escapes as characters, doubled backslashes halved."""
    out, i = [], 0
    while i < len(shown):
        if shown[i] != "\\":
            out.append(shown[i])
            i += 1
            continue
        run_end = i
        while run_end < len(shown) and shown[run_end] == "\\":
            run_end += 1
        count, after = run_end - i, shown[run_end:run_end + 1]
        if after == "x":
            out.append("\\" * (count // 2))
            if count % 2:  # the last backslash starts an escape
                out.append(chr(int(shown[run_end + 1:run_end + 3], 16)))
                run_end += 3
        elif after and unicodedata.category(after) == "Cc" and after not in keep:
            raise AssertionError(f"a raw control character in {shown!r}")
        else:
            out.append("\\" * count)
        i = run_end
    return "".join(out)


@given(TEXTS)
def test_no_control_character_is_left_and_the_text_reads_back(text):
    shown = visible(text)
    assert _controls(shown) == []
    assert _decode(shown) == text


@given(TEXTS)
def test_kept_characters_stay_and_still_read_back(text):
    shown = visible(text, keep="\n\t")
    assert _controls(shown, allowed="\n\t") == []
    assert shown.count("\t") == text.count("\t")
    assert _decode(shown, keep="\n\t") == text


@given(TEXTS, TEXTS)
def test_distinct_texts_stay_distinct(first, second):
    assert (visible(first) == visible(second)) == (first == second)


@given(st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cs"),
                                      blacklist_characters="\\")))
def test_text_without_controls_or_backslashes_is_unchanged(text):
    assert visible(text) == text


def test_the_escapes_read_as_python_writes_them():
    assert visible("a\x1b[31mb\x00") == "a\\x1b[31mb\\x00"
    assert visible("\\x1b") == "\\\\x1b"  # the four characters, apart from ESC's escape
    assert visible("C:\\data\\new") == "C:\\data\\new"  # no "x" after it: unchanged


def _hostile_data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 2)) + np.repeat(np.eye(2) * 6, 60, axis=0)
    sensitive = pd.DataFrame({
        "se\x00x": rng.choice(["F\x1b[0m", "M"], 120),
        "\x1b[31mgroup": rng.choice(["a\x85", "b\r", "c"], 120),
    })
    profile = pd.DataFrame({"note\x07": np.repeat(["x\x00y", "z"], 60)})
    return X, sensitive, profile, np.repeat([0, 1], 60)


def test_the_audit_writes_no_control_character_raw():
    X, sensitive, profile, labels = _hostile_data()
    report = audit(labels, X, sensitive_features=sensitive, profile=profile,
                   title="audit of \x1b]0;pwned\x07", check_data=False)
    text, page = report.to_text(), report.to_html()
    fragment = report._repr_html_()
    for shown in (text, page, fragment):
        assert _controls(shown) == []
    for name in ("se\\x00x", "\\x1b[31mgroup"):
        assert name in text and name in page
    assert "note\\x07" in page  # the profile is in the page's cluster tables
    assert "F\\x1b[0m" in text or "b\\x0d" in text  # a value named in the worst clusters
    assert "x\\x00y" in page  # a profile value
    assert "audit of \\x1b]0;pwned\\x07" in page


def test_the_command_line_prints_no_control_character_raw(capsys, tmp_path):
    people = make_people()
    people["\x1b[31mgroup"] = people.pop("group") + "\x1b[0m"
    people["sex"] = people["sex"].where(people["sex"] == "F", "M\x9b2J")
    path = write_table(tmp_path, "people.csv", people)
    status, out, err = run(capsys, "fit", path, "--sensitive", "sex,\x1b[31mgroup",
                           "--n-clusters", "3", "--exclude", "id")
    assert status == 0, err
    assert _controls(out) == [] and _controls(err) == []
    assert "\\x1b[31mgroup" in out
    status, out, err = run(capsys, "fit", path, "--sensitive", "sex,no\x1b[2Jsuch",
                           "--n-clusters", "3")
    assert status != 0 and _controls(err) == []
    assert re.search(r"no(\\\\|\\)x1b\[2Jsuch", err)
