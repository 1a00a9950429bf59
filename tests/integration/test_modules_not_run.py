"""A whole area the run could not run (issue 34, item 7) is said in the terminal summary, the results and the report."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conformance.report.model import build
from conformance.report.render import render_site
from conformance.data.results import read_results

REPO = Path(__file__).resolve().parents[2]


def test_the_models_area_without_transformers_is_said_everywhere(tmp_path):
    absent = tmp_path / "site" / "transformers"  # shadows the installed package: an environment without it
    absent.mkdir(parents=True)
    (absent / "__init__.py").write_text("raise ImportError('transformers is absent here (a self-test)')\n")
    out = tmp_path / "results.json"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(absent.parent), str(REPO)])}
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--impl=torch.utils.checkpoint",
                          "--variant=reentrant", f"--results={out}", "conformance/suite/test_models.py",
                          "conformance/suite/test_api.py", "-k", "test_output_in_every_floating_dtype"],
                         cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert "area not run: models (conformance/suite/test_models.py): the models area needs transformers" in run.stdout
    results = read_results(out)
    [module] = results.header["modules_not_run"]
    assert module["area"] == "models" and "transformers is absent here" in module["reason"]
    site = render_site(build([("results.json", results)]))
    assert 'data-not-run="models"' in site["index.html"]
    assert "Area not run: <code>models</code>" in site["index-details/impl-torch.utils.checkpoint.html"]
