"""The parallel run's groups: ``make test`` runs ``pytest -n 4 --dist loadgroup``.

xdist sends the tests of one ``xdist_group`` to one worker by writing the group into
each test's id while it collects them (the CDK synthesis is paid once that way:
tests/infra/conftest.py). A pytest that ids tests another way loses every group without a
word; pytest 9.2 with xdist 3.8 did, and each worker then synthesized the CDK app again,
minutes of the suite's CPU (hence the pin in pyproject.toml).
"""

from __future__ import annotations

import pytest


def test_every_grouped_test_carries_its_group_in_its_id(request: pytest.FixtureRequest) -> None:
    if not getattr(request.config.option, "loadgroup", False):
        pytest.skip("not a --dist loadgroup run (make test's is)")
    grouped, lost = 0, []
    for item in request.session.items:
        groups = {str(m.args[0]) for m in item.iter_markers("xdist_group") if m.args}
        if groups:
            grouped += 1
            if not item.nodeid.endswith("@" + "_".join(sorted(groups))):
                lost.append(item.nodeid)
    if not grouped:
        pytest.skip("no grouped test in this run")
    assert lost == [], f"xdist lost the group of {len(lost)} tests, first {lost[0]}"
