"""`-o` is the format, as in kubectl, helm, Pluto and kubent (issue 26: `kubehop scan -o json .` wrote
the text report to a file named `json`); `--format` is its synonym, `--output-file` the file, and
`-o FILE` (its old meaning) still writes the file, with a warning. The formats added with it: wide,
csv, yaml. In-process, as a user runs `kubehop`."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
import yaml

from conftest import cli_runner
from scanner.cli import cli

BLOCKER = "apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata:\n  name: web\n  namespace: shop\nspec: {}\n"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / "deploy").mkdir()
    (tmp_path / "deploy" / "ing.yaml").write_text(BLOCKER)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def kubehop(*args: str):
    result = cli_runner().invoke(cli, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


def test_o_names_the_format_and_writes_no_file(repo):
    done = kubehop("scan", "-o", "json", "deploy")
    assert done.exit_code == 1 and json.loads(done.stdout)["findings"][0]["file"] == "deploy/ing.yaml"
    assert not (repo / "json").exists() and done.stderr == ""
    assert kubehop("scan", "--output", "json", "deploy").stdout == done.stdout
    assert kubehop("scan", "--format", "json", "deploy").stdout == done.stdout
    assert kubehop("scan", "-o", "json", "--format", "json", "deploy").stdout == done.stdout


def test_output_file_writes_the_report(repo):
    done = kubehop("scan", "-o", "json", "--output-file", "report.json", "deploy")
    assert done.exit_code == 1 and done.stdout == ""
    assert json.loads((repo / "report.json").read_text())["exit_code"] == 1


def test_o_with_a_file_name_still_writes_it_with_a_warning(repo):
    done = kubehop("scan", "-o", "report.txt", "deploy")
    assert done.exit_code == 1 and done.stdout == ""
    assert "--output FILE is deprecated: -o/--output names the format now; write --output-file report.txt" \
        in done.stderr
    assert (repo / "report.txt").read_text().startswith("kubehop ")


@pytest.mark.parametrize("args, words", [
    (["-o", "json", "--format", "text"], "-o/--output json and --format text name different formats"),
    (["-o", "report.txt", "--output-file", "r.txt"], "not a format"),
])
def test_what_cannot_both_hold_is_a_usage_error(repo, args, words):
    done = kubehop("scan", *args, "deploy")
    assert done.exit_code == 2 and words in done.stderr
    assert not (repo / "r.txt").exists() and not (repo / "report.txt").exists()


def test_plan_takes_o_and_output_file(repo):
    (repo / "deploy" / "plan.yaml").write_text(
        "apiVersion: upgrade.cattle.io/v1\nkind: Plan\nmetadata: {name: k3s-server, namespace: system-upgrade}\n"
        "spec:\n  version: v1.31.4+k3s1\n  nodeSelector:\n    matchExpressions:\n"
        "      - {key: node-role.kubernetes.io/control-plane, operator: Exists}\n")
    as_json = json.loads(kubehop("plan", "--target", "1.33", "-o", "json", "deploy").stdout)
    assert yaml.safe_load(kubehop("plan", "--target", "1.33", "-o", "yaml", "deploy").stdout) == as_json
    done = kubehop("plan", "--target", "1.33", "-o", "markdown", "--output-file", "plan.md", "deploy")
    assert done.stdout == "" and (repo / "plan.md").read_text().startswith("## ")


def test_wide_is_one_line_per_finding_under_a_header(repo):
    (repo / "deploy" / "pdb.yaml").write_text("apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\n"
                                              "metadata: {name: pdb}\n")
    lines = kubehop("scan", "--target", "1.36", "-o", "wide", "deploy").stdout.splitlines()
    assert lines[0].split() == ["FILE", "SEVERITY", "RULE", "OBJECT", "HOP", "FIX"]
    assert lines[1].split() == ["deploy/ing.yaml:1:1", "error", "extensions/v1beta1/Ingress", "Ingress", "shop/web",
                                "hop", "to", "1.22", "use", "networking.k8s.io/v1"]
    assert lines[2].split()[:3] == ["deploy/pdb.yaml:1:1", "error", "policy/v1beta1/PodDisruptionBudget"]
    assert lines[1].index("error") == lines[2].index("error")  # aligned
    assert lines[-1].startswith("blocked: 1.36 cannot be reached as is (2 blockers")


def test_csv_is_quoted_as_rfc_4180_with_no_formula_from_the_tree(repo):
    (repo / "deploy" / "odd.yaml").write_text(
        'apiVersion: batch/v1beta1\nkind: CronJob\nmetadata:\n  name: "=HYPERLINK(\\"http://x\\",\\"a,b\\")"\n'
        '  namespace: "@sum\\nline"\n')
    out = kubehop("scan", "--target", "1.36", "-o", "csv", "deploy").stdout_bytes.decode()
    assert out.startswith("file,line,column,severity,rule,hop,breaks_in,api_version,kind,namespace,name,"
                                  "message,fix,via\n")
    rows = list(csv.DictReader(io.StringIO(out, newline="")))
    assert [row["file"] for row in rows] == ["deploy/ing.yaml", "deploy/odd.yaml"]
    odd = rows[1]
    assert odd["name"] == "'=HYPERLINK(\"http://x\",\"a,b\")"  # shown as text, quotes and comma kept
    assert odd["namespace"] == "'@sum\\nline"  # one record per line: the newline shown as \n
    assert (odd["line"], odd["severity"], odd["fix"]) == ("1", "error", "use batch/v1")
    assert out.count("\n") == 3 and "\r" not in out  # a record a line: no carriage return for a log


def test_yaml_is_the_json_report(repo):
    as_json = json.loads(kubehop("scan", "-o", "json", "deploy").stdout)
    assert yaml.safe_load(kubehop("scan", "-o", "yaml", "deploy").stdout) == as_json


def test_report_takes_the_new_formats(repo):
    done = kubehop("scan", "--report", "csv=f.csv", "--report", "wide=f.txt", "--report", "yaml=f.yaml", "deploy")
    assert done.exit_code == 1
    assert (repo / "f.csv").read_bytes() == kubehop("scan", "-o", "csv", "deploy").stdout_bytes
    assert (repo / "f.yaml").read_text() == kubehop("scan", "-o", "yaml", "deploy").stdout
    assert (repo / "f.txt").read_text().startswith("FILE ")


@pytest.mark.parametrize("command", ["components", "inventory", "rules"])
def test_every_command_takes_o_for_its_format(repo, command):
    args = [command] + ([] if command == "rules" else ["deploy"])
    assert json.loads(kubehop(*args, "-o", "json").stdout) == json.loads(kubehop(*args, "--format", "json").stdout)
