"""The Ubuntu 24.04 + AppArmor workflow is complete, valid YAML and follows
the README's install steps exactly."""
import re

import yaml

from capsule_lab import REPO


def test_workflow_is_complete():
    text = (REPO / "ci" / "github" / "capsule.yml").read_text()
    wf = yaml.safe_load(text)
    job = wf["jobs"]["ubuntu-apparmor"]
    assert job["runs-on"] == "ubuntu-24.04"
    run = "\n".join(step.get("run", "") for step in job["steps"])
    readme = (REPO / "README.md").read_text()
    # The profile is loaded exactly as the README says, then the preflight runs.
    for needle in ["apparmor-profiles", "/usr/share/apparmor/extra-profiles/bwrap-userns-restrict",
                   "apparmor_parser --replace /etc/apparmor.d/bwrap-userns-restrict",
                   "--disable-userns --cap-drop ALL --ro-bind / / /bin/true"]:
        assert needle in readme and needle in re.sub(r"\\\n\s*", "", run), needle
    for target in ["make deps", "make test", "make fuzz-smoke", "capsule-host attest"]:
        assert target in run, target
    uploads = [s for s in job["steps"] if s.get("uses", "").startswith("actions/upload-artifact")]
    assert uploads and uploads[0]["with"]["path"] == "build/artifacts/"
    assert "fail-closed-matrix.md" in run
    node = [s for s in job["steps"] if s.get("uses", "").startswith("actions/setup-node")][0]
    assert int(node["with"]["node-version"]) >= 20
