"""The findings a maintainer can file (findings/findings.toml, conformance/data/findings.py): the registry against the
clause registry, the expectations it explains and tox.ini; `findings --check` on scripts whose outcome is known; the
torch findings' scripts themselves (torch is here: each fails on torch and passes on the reference); their report page."""

from __future__ import annotations

import configparser
from pathlib import Path

import pytest

from conformance.data import findings
from conformance.__main__ import main
from conformance.data.expectations import load_breakages, load_deviations
from conformance.data.ids import canonical_id
from conformance.report import write_report
from conformance.data.results import write_results
from tests.unit.test_report import Page, results

ROOT = Path(__file__).resolve().parents[2]
REGISTRY = ROOT / "findings" / "findings.toml"
REGISTERED = findings.load_findings(REGISTRY)
TORCH_FINDINGS = [f for f in REGISTERED if f.project == "torch"]


def tox_envs() -> dict[str, str]:
    """{env name: its commands} from tox.ini."""
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(ROOT / "tox.ini")
    return {section.removeprefix("testenv:"): parser[section].get("commands", "")
            for section in parser.sections() if section.startswith("testenv:")}


def declared(declaration: findings.Declaration) -> bool:
    """Whether expectations.toml has a deviation or breakage for the declaration's implementation and clause."""
    impl, clause, variant = canonical_id(declaration.impl), declaration.clause, declaration.variant
    return (any(impl in d.impl and clause in d.clauses and variant in (None, d.variant or variant)
                for d in load_deviations())
            or any(impl in b.impl and (not b.clauses or clause in b.clauses) and variant in (None, b.variant or variant)
                   for b in load_breakages()))


def test_the_registry_names_findings_of_torch_and_of_third_parties():
    assert {f.project for f in REGISTERED} >= {"torch", "unsloth", "colossalai"}
    assert len(TORCH_FINDINGS) == 2


@pytest.mark.parametrize("finding", REGISTERED, ids=lambda f: f.id)
def test_each_finding_explains_a_declared_deviation_and_is_checked_in_its_packages_tox_env(finding):
    assert finding.script.is_file() and finding.script.parent == REGISTRY.parent
    assert finding.id.startswith(finding.project + "-") and finding.script.name.startswith(finding.project + "_")
    assert declared(finding.declaration), f"no expectations.toml entry for {finding.declaration}"
    commands = tox_envs().get(finding.tox_env)
    assert commands is not None, f"no [testenv:{finding.tox_env}] in tox.ini"
    assert f"findings --check --project {finding.project}" in commands
    docstring = finding.script.read_text(encoding="utf-8").split('"""')[1]
    assert docstring.splitlines()[0] == finding.title, "the script's docstring is the report: its title first"
    for part in ("Documentation", "https://", "Steps:", "Expected:", "Actual"):
        assert part in docstring, f"the report in {finding.script.name} has no {part!r}"


def test_the_compat_report_renders_the_findings_page():
    assert "--findings {toxinidir}/findings/findings.toml" in tox_envs()["compat-report"]


def test_a_registry_entry_with_an_unknown_clause_or_a_reported_status_without_its_report_is_rejected(tmp_path):
    registry = tmp_path / "findings.toml"
    (tmp_path / "x_bug.py").write_text("")
    entry = ('[[finding]]\nid = "x-bug"\nproject = "x"\ntitle = "t"\nclause = "{clause}"\nstatus = "{status}"\n'
             'script = "x_bug.py"\npackage = "torch"\ntox_env = "x"\nright = "torch.utils.checkpoint"\n'
             'declaration = {{ impl = "x", clause = "api.same-gradients" }}\n')
    registry.write_text(entry.format(clause="api.same-gradients", status="new"))
    assert [f.id for f in findings.load_findings(registry)] == ["x-bug"]
    for clause, status, problem in (("no.such-clause", "new", "unknown clause"),
                                    ("api.same-gradients", "reported", "reported_as = 'owner/repo#N'"),
                                    ("api.same-gradients", "maybe", "status 'maybe'")):
        registry.write_text(entry.format(clause=clause, status=status))
        with pytest.raises(ValueError, match=problem):
            findings.load_findings(registry)


# A script's exit statuses on the package and on the right module, as `--check` judges them.
SCRIPT = """
import sys
right = "--impl" in sys.argv  # the run on the finding's right module
{body}
"""


def registry_of(tmp_path, body: str, *, package: str = "torch", status: str = "new") -> findings.Finding:
    (tmp_path / "x_bug.py").write_text(SCRIPT.format(body=body))
    reported_as = 'reported_as = "o/r#1"\n' if status == "reported" else ""
    (tmp_path / "findings.toml").write_text(
        f'[[finding]]\nid = "x-bug"\nproject = "x"\ntitle = "t"\nclause = "api.same-gradients"\nstatus = "{status}"\n'
        f'{reported_as}script = "x_bug.py"\npackage = "{package}"\ntox_env = "x"\nright = "reference_impl"\n'
        'declaration = { impl = "x", clause = "api.same-gradients" }\n')
    (finding,) = findings.load_findings(tmp_path / "findings.toml")
    return finding


@pytest.mark.parametrize("body, verdict, failed", [
    ("print('actual: bug'); sys.exit(0 if right else 1)", "confirmed", False),
    ("print('actual: right'); sys.exit(0)", "fixed?", True),
    ("print('actual: bug'); sys.exit(1)", "wrong script", True),
    ("raise RuntimeError('the script itself')", "wrong script", True),
])
def test_check_wants_the_script_to_fail_on_the_package_and_pass_on_the_right_module(tmp_path, body, verdict, failed):
    outcome = findings.check(registry_of(tmp_path, body))
    assert (outcome.verdict, outcome.failed) == (verdict, failed), outcome.detail


def test_check_of_a_fixed_finding_wants_it_to_pass_on_the_package(tmp_path):
    assert findings.check(registry_of(tmp_path, "sys.exit(0)", status="fixed")).verdict == "confirmed"
    assert findings.check(registry_of(tmp_path, "sys.exit(0 if right else 1)", status="fixed")).verdict == "fixed?"


def test_a_finding_whose_package_is_absent_is_not_checked_and_does_not_fail_the_check(tmp_path, capsys):
    finding = registry_of(tmp_path, "sys.exit(1)", package="no_such_package_here")
    outcome = findings.check(finding)
    assert outcome.verdict == "not checked" and not outcome.failed
    assert main(["findings", "--check", "--registry", str(tmp_path / "findings.toml")]) == 0
    assert "0 of 1 finding(s) as registered, 1 not checked here" in capsys.readouterr().out


def test_the_command_lists_the_registry_and_rejects_an_unknown_project(capsys):
    assert main(["findings", "--registry", str(REGISTRY)]) == 0
    listed = capsys.readouterr().out
    assert all(f.id in listed for f in REGISTERED)
    assert ("(not verified on the package)" in listed) == any(not f.verified for f in REGISTERED)
    assert main(["findings", "--registry", str(REGISTRY), "--project", "no-such-project"]) == 2


@pytest.mark.parametrize("finding", TORCH_FINDINGS, ids=lambda f: f.id)
def test_each_torch_finding_fails_on_torch_and_passes_on_the_reference(finding):
    """The acceptance run: torch 2.13 is the package here, reference_impl the right behaviour."""
    outcome = findings.check(finding)
    assert outcome.verdict == "confirmed", outcome.detail


def test_the_findings_page_lists_each_finding_and_links_a_copy_of_its_script(tmp_path):
    write_results(tmp_path / "run.json", results("impl", ("api.same-gradients", "reentrant", "pass")))
    index = tmp_path / "site" / "compat.html"
    write_report([tmp_path / "run.json"], index, findings=REGISTRY)
    details = tmp_path / "site" / "compat-details"
    page = Page((details / "findings.html").read_text())
    text = " ".join("".join(page.chunks).split())
    links = [value for name, value in page.attrs if name == "href"]
    for finding in REGISTERED:
        assert finding.title in text and finding.clause in text
        assert f"findings/{finding.script.name}" in links
        assert (details / "findings" / finding.script.name).read_text() == finding.script.read_text()
    assert ("not yet run on the package" in text) == any(not f.verified for f in REGISTERED)
    assert "area-api.html#area-api" in links  # the clause's area page
    assert f'data-findings="{len(REGISTERED)}"' in index.read_text() and 'href="compat-details/findings.html"' in index.read_text()
    assert "data-findings" not in write_report([tmp_path / "run.json"], tmp_path / "plain.html").read_text()
