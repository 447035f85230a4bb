"""make prove-fixes locates each defence by its C tokens, not its layout:
every revert matches exactly one place, before and after a reformat."""
import re
import sys

from capsule_lab import REPO

sys.path.insert(0, str(REPO / "ci"))
import prove_hazard_fixes as prove  # noqa: E402


def reformat(text):
    """What a formatter might do: re-indent and break argument lists."""
    return re.sub(r"[ \t]+", "  ", text).replace(", ", ",\n      ").replace("(", "(\n  ")


def test_every_revert_matches_one_place_whatever_the_layout():
    for fix, path, old, new, cases in prove.REVERTS:
        text = (REPO / path).read_text()
        for variant in (text, reformat(text)):
            n = len(prove.token_pattern(old).findall(variant))
            assert n == 1, f"{fix}: {n} matches in {path}"
        assert cases, fix
