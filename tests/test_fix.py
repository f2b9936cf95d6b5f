"""`kubehop fix`: golden files (input/ -> expected/), diff mode, layout kept to the byte."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from scanner import data
from scanner.fix.engine import NotSafe, migrate
from scanner.yaml_layout import Layout, splice
from scanner.fix.migrations import Migration, load_migrations
from scanner.fix.plan import Planner
from scanner.rulebook import load_rulebook
from scanner.versions import Minor
from tests.conftest import FIXTURES, cli_runner
from tests.conftest import run_kubehop_text as run_kubehop

GOLDEN = FIXTURES / "fix"
CASES = sorted(p.name for p in GOLDEN.iterdir() if (p / "input").is_dir())


def files_under(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def fix(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return run_kubehop("fix", "--no-config", "--target", "1.36", *args, ".", cwd=cwd)


def left_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("not migrated:")]


def expected_left(case: str) -> list[str]:
    path = GOLDEN / case / "expected-left.txt"
    return path.read_text().splitlines() if path.exists() else []


@pytest.mark.parametrize("case", CASES)
def test_golden_write(case, tmp_path):
    work = tmp_path / "work"
    shutil.copytree(GOLDEN / case / "input", work)
    done = fix(work, "--write")
    assert files_under(work) == files_under(GOLDEN / case / "expected")
    assert left_lines(done.stderr) == expected_left(case)
    assert done.returncode == (1 if expected_left(case) else 0)
    assert done.stdout == ""


@pytest.mark.parametrize("case", CASES)
def test_golden_diff_applies_and_writes_nothing(case, tmp_path):
    if shutil.which("git") is None:
        pytest.skip("git is not on PATH (needed to apply the diff)")
    work = tmp_path / "work"
    shutil.copytree(GOLDEN / case / "input", work)
    done = fix(work)
    assert files_under(work) == files_under(GOLDEN / case / "input")
    patch = tmp_path / "fix.patch"
    patch.write_text(done.stdout)
    subprocess.run(["git", "apply", str(patch)], cwd=work, check=True)
    assert files_under(work) == files_under(GOLDEN / case / "expected")


@pytest.mark.parametrize("case", CASES)
def test_fixing_twice_changes_nothing(case, tmp_path):
    work = tmp_path / "work"
    shutil.copytree(GOLDEN / case / "expected", work)
    done = fix(work)
    assert done.stdout == ""
    assert [reason(line) for line in left_lines(done.stderr)] == [reason(line) for line in expected_left(case)]


def reason(left: str) -> str:
    """A 'not migrated' line without its line number (fixing shifts lines)."""
    path, _, rest = left.rsplit(": ", 1)[0].partition(".yaml:")
    return path + rest.partition(":")[2] + left.rsplit(": ", 1)[1]


def test_crlf_and_bom_are_kept(tmp_path):
    source = (GOLDEN / "comments" / "input" / "ingress.yaml").read_text()
    expected = (GOLDEN / "comments" / "expected" / "ingress.yaml").read_text()
    target = tmp_path / "ingress.yaml"
    target.write_bytes(b"\xef\xbb\xbf" + source.replace("\n", "\r\n").encode())
    assert fix(tmp_path, "--write").returncode == 0
    assert target.read_bytes() == b"\xef\xbb\xbf" + expected.replace("\n", "\r\n").encode()


INGRESS = (GOLDEN / "comments" / "input" / "ingress.yaml").read_text()


def test_nothing_is_due_before_the_deprecation():
    planner = Planner(Minor(1, 13), None, load_rulebook())
    assert planner.decide("extensions/v1beta1", "Ingress") is None
    assert Planner(Minor(1, 14), None, load_rulebook()).decide("extensions/v1beta1", "Ingress") == \
        "networking.k8s.io/v1 Ingress is served only from Kubernetes 1.19, after the target 1.14"
    assert isinstance(Planner(Minor(1, 19), None, load_rulebook()).decide("extensions/v1beta1", "Ingress"),
                      Migration)


def test_replacement_not_served_by_todays_cluster_is_left(tmp_path):
    (tmp_path / "ingress.yaml").write_text(INGRESS)
    done = run_kubehop("fix", "--no-config", "--from", "1.18", "--target", "1.22", ".", cwd=tmp_path)
    assert done.stdout == ""
    assert left_lines(done.stderr) == [
        "not migrated: ./ingress.yaml:4: Ingress shop/shop: networking.k8s.io/v1 Ingress is served only from "
        "Kubernetes 1.19 and the cluster runs 1.18: migrate during the hop"]
    assert done.returncode == 1


def test_broken_file_is_reported_and_the_rest_fixed(tmp_path):
    (tmp_path / "a-broken.yaml").write_text("apiVersion: batch/v1beta1\nkind: CronJob\nspec: [\n")
    (tmp_path / "b-ingress.yaml").write_text(INGRESS)
    done = fix(tmp_path, "--write")
    assert "a-broken.yaml:4: invalid YAML" in done.stderr
    assert "Traceback" not in done.stderr
    assert (tmp_path / "b-ingress.yaml").read_text() == \
        (GOLDEN / "comments" / "expected" / "ingress.yaml").read_text()
    assert done.returncode == 3


def test_config_gives_target_and_excludes(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "vendor").mkdir()
    (tmp_path / "vendor" / "ingress.yaml").write_text(INGRESS)
    (tmp_path / "ingress.yaml").write_text(INGRESS)
    (tmp_path / ".kubehop.yaml").write_text('target: "1.16"\nexclude: [vendor]\n')
    done = run_kubehop("fix", ".", cwd=tmp_path)
    assert done.stdout == "" and left_lines(done.stderr) == [
        "not migrated: ./ingress.yaml:4: Ingress shop/shop: networking.k8s.io/v1 Ingress is served only from "
        "Kubernetes 1.19, after the target 1.16"]
    done = run_kubehop("fix", "--target", "1.22", ".", cwd=tmp_path)
    assert "+++ b/ingress.yaml" in done.stdout and "vendor" not in done.stdout


def load_one(text: str):
    return Layout(text).load(text)


def test_a_value_of_unexpected_type_is_not_migrated():
    ingress = load_one("apiVersion: extensions/v1beta1\nkind: Ingress\n"
                       "spec: {backend: {serviceName: a, servicePort: 80.5}}\n")
    with pytest.raises(NotSafe, match="servicePort: a number value has no place in the new version"):
        migrate(ingress, load_migrations()[("extensions/v1beta1", "Ingress")])


def test_splice_keeps_lines_ruamel_would_relayout():
    original = ["a:   1   # odd spacing", "b:", "  c: 2", "f: 1", "d: [x,   y]"]
    before = ["a: 1     # odd spacing", "b:", "  c: 2", "f: 1", "d: [x, y]"]
    after = ["a: 1     # odd spacing", "b:", "  e: 2", "f: 1", "d: [x, y]"]
    assert splice(original, before, after) == ["a:   1   # odd spacing", "b:", "  e: 2", "f: 1", "d: [x,   y]"]


def test_splice_keeps_relaid_neighbours_line_for_line():
    original = ["a: 1", "b:  {c: 2}", "d: 3"]
    before = ["a: 1", "b: {c: 2}", "d: 3"]
    after = ["a: 1", "b: {c: 2}", "e: 3"]
    assert splice(original, before, after) == ["a: 1", "b:  {c: 2}", "e: 3"]


def test_splice_takes_ruamels_lines_where_they_cannot_be_matched():
    original = ["a: 1", "b: {c: 2,", "  d: 3}", "e: 3"]
    before = ["a: 1", "b: {c: 2, d: 3}", "e: 3"]
    after = ["a: 1", "b: {c: 2, d: 3}", "f: 3"]
    assert splice(original, before, after) == ["a: 1", "b: {c: 2, d: 3}", "f: 3"]


def test_migration_files_obey_their_schema_with_a_clear_error(tmp_path):
    folder = tmp_path / "rules" / "migrations"
    folder.mkdir(parents=True)
    (folder / "bad.yaml").write_text(
        "migrations:\n- {from: [batch/v1beta1], to: batch/v1, kinds: [CronJob], operations: "
        "[{rename: {at: spec}}], source: 'https://x'}\n")
    with pytest.raises(data.DataError, match="rules/migrations/bad.yaml: migrations/0/operations/0"):
        data.load_folder("rules/migrations", root=tmp_path)


def test_migrations_agree_with_the_removal_rules():
    """A migration goes to the rule's replacement, or past it to a version of the same group
    that is still served (flowcontrol v1beta1 -> v1 rather than the short-lived v1beta2)."""
    book = load_rulebook()
    for (old, kind), migration in load_migrations().items():
        rule = book.api_rules.get((old, kind))
        if rule is None:
            continue
        assert rule.replacement_kind == kind, (old, kind)
        assert migration.new.rpartition("/")[0] == rule.replacement.rpartition("/")[0], (old, kind)
        first, last = book.served.spans[(migration.new, kind)]
        assert last is None, (old, kind)


def changed_objects(case: str):
    """The objects of a golden case that fix rewrote, as plain data (Helm templates excluded)."""
    import yaml

    def objects(text: str):
        for document in yaml.safe_load_all(text):
            yield from document["items"] if str(document.get("kind")).endswith("List") else [document]

    for path in sorted((GOLDEN / case / "expected").rglob("*.y*ml")):
        source = GOLDEN / case / "input" / path.relative_to(GOLDEN / case / "expected")
        if "{{" not in path.read_text():
            yield from (new for old, new in zip(objects(source.read_text()), objects(path.read_text()))
                        if old != new)


@pytest.mark.parametrize("case", CASES)
def test_rewritten_objects_are_valid_at_the_target(case):
    kubernetes_validate = pytest.importorskip("kubernetes_validate")
    from kubernetes_validate.utils import SchemaNotFoundError

    for obj in changed_objects(case):
        try:
            kubernetes_validate.validate(obj, "1.36", strict=True)
        except SchemaNotFoundError:  # only custom resources have no schema there
            assert not obj["apiVersion"].split("/")[0].endswith("k8s.io"), obj["apiVersion"]


def test_standard_input_is_refused(tmp_path):
    done = run_kubehop("fix", "-", cwd=tmp_path)
    assert done.returncode == 2 and "cannot read standard input" in done.stderr


def test_unwritable_file_is_reported(tmp_path):
    target = tmp_path / "ingress.yaml"
    target.write_text(INGRESS)
    target.chmod(0o444)
    if os.access(target, os.W_OK):
        pytest.skip("running as a user who can write read-only files (root)")
    done = fix(tmp_path, "--write")
    assert done.returncode == 3 and "ingress.yaml: cannot write: Permission denied" in done.stderr


def test_objects_left_are_listed_in_file_order(tmp_path):
    zero = ("apiVersion: flowcontrol.apiserver.k8s.io/v1beta3\nkind: PriorityLevelConfiguration\n"
            "metadata: {name: %s}\nspec: {type: Limited, limited: {nominalConcurrencyShares: 0}}\n")
    (tmp_path / "a.yaml").write_text(zero % "a1" + "---\n" + zero % "a2")
    (tmp_path / "b.yaml").write_text(zero % "b1")
    done = fix(tmp_path)
    assert [line.split(": ")[1] for line in left_lines(done.stderr)] == [
        "./a.yaml:1", "./a.yaml:6", "./b.yaml:1"]


def test_an_object_with_old_and_new_fields_is_left_alone():
    ingress = load_one("apiVersion: extensions/v1beta1\nkind: Ingress\n"
                       "spec:\n  backend: {serviceName: a, servicePort: 80}\n"
                       "  defaultBackend: {service: {name: b, port: {number: 80}}}\n")
    with pytest.raises(NotSafe, match="both backend and defaultBackend are set"):
        migrate(ingress, load_migrations()[("extensions/v1beta1", "Ingress")])


def test_silenced_objects_are_left_as_they_are(tmp_path):
    cronjob = "apiVersion: batch/v1beta1\nkind: CronJob\nmetadata: {name: %s}\n"
    text = (cronjob % "moved" + "---\n# kubehop: ignore[batch/v1beta1/CronJob] -- the old cluster keeps it\n"
            + cronjob % "kept" + "---\n" + "apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\n"
            "metadata: {name: ignored}\nspec: {minAvailable: 1, selector: {matchLabels: {a: b}}}\n")
    (tmp_path / "jobs.yaml").write_text(text)
    (tmp_path / ".git").mkdir()
    (tmp_path / ".kubehop.yaml").write_text("ignore: [policy/*]\n")
    done = run_kubehop("fix", "--target", "1.36", "--write", ".", cwd=tmp_path)
    assert (tmp_path / "jobs.yaml").read_text() == text.replace("batch/v1beta1", "batch/v1", 1)
    assert done.returncode == 0


def test_after_fix_the_scan_finds_only_what_fix_left(tmp_path):
    import json

    from tests.conftest import REPO

    tree = tmp_path / "examples"
    shutil.copytree(REPO / "examples", tree)
    done = run_kubehop("fix", "--no-config", "--target", "1.36", "--write", ".", cwd=tree)
    assert int(done.stderr.splitlines()[-1].split()[0]) > 0  # "<n> objects migrated in ..."
    left = {line.split(": ")[1] for line in left_lines(done.stderr)}  # path:line
    report = json.loads(run_kubehop("scan", "--no-config", "--target", "1.36", "--format", "json", ".",
                                    cwd=tree).stdout)
    migratable = load_migrations()
    for finding in report["findings"]:
        obj = finding["object"]
        assert (obj["apiVersion"], obj["kind"]) not in migratable or \
            f"{finding['file']}:{finding['line']}" in left, finding


def test_ignored_third_party_rules_are_left_as_they_are(tmp_path):
    """The ignore list names the scan's rule ids; for a CRD API those are the component's (flux/...)."""
    text = "apiVersion: image.toolkit.fluxcd.io/v1beta2\nkind: ImagePolicy\nmetadata: {name: %s}\n"
    (tmp_path / "images.yaml").write_text(
        text % "kept" + "---\n# kubehop: ignore[flux/image.toolkit.fluxcd.io/v1beta2/ImageRepository]\n"
        + text.replace("ImagePolicy", "ImageRepository") % "silenced")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".kubehop.yaml").write_text("ignore: [flux/image.toolkit.fluxcd.io/v1beta2/ImagePolicy]\n")
    before = (tmp_path / "images.yaml").read_text()
    done = run_kubehop("fix", "--target", "1.36", "--write", ".", cwd=tmp_path)
    assert (tmp_path / "images.yaml").read_text() == before
    assert done.returncode == 0


def test_files_without_a_kind_fix_acts_on_are_not_parsed():
    from scanner.fix import _mentions

    interesting = {"Endpoints": {"v1"}, "Ingress": {"extensions/v1beta1"}}
    assert not _mentions("apiVersion: v1\nkind: Service\n", interesting)
    assert not _mentions("apiVersion: networking.k8s.io/v1\nkind: Ingress\n", interesting)
    assert _mentions("apiVersion: v1\nkind: Endpoints\n", interesting)
    assert _mentions('{"apiVersion": "extensions/v1beta1", "kind": "Ingress"}', interesting)
    assert _mentions("kind: List\nitems:\n- {apiVersion: extensions/v1beta1, kind: 'Ingress'}\n", interesting)


def test_diff_of_a_file_without_a_final_newline_ends_with_one_and_applies(tmp_path):
    """The summary on standard error must not be glued to the last line of the diff; git marks the
    missing newline as diff(1) does, and the patch applies."""
    if shutil.which("git") is None:
        pytest.skip("git is not on PATH (needed to apply the diff)")
    text = "apiVersion: batch/v1beta1\nkind: CronJob\nmetadata: {name: nightly}\nspec: {schedule: '@daily'}"
    (tmp_path / "job.yaml").write_text(text)
    done = run_kubehop("fix", "--no-config", "--target", "1.36", ".", cwd=tmp_path)
    assert done.stdout.endswith("\n\\ No newline at end of file\n")
    assert done.stderr.splitlines()[-1] == "1 object to migrate in 1 file; 0 left to a person"
    (tmp_path / "fix.patch").write_text(done.stdout)
    subprocess.run(["git", "apply", "fix.patch"], cwd=tmp_path, check=True)
    assert (tmp_path / "job.yaml").read_text() == text.replace("batch/v1beta1", "batch/v1")


def fix_in_process(cwd: Path, monkeypatch, *args: str):
    """`kubehop fix --no-config --target 1.36 ARGS .` run in this process (click's CliRunner)."""
    from scanner.cli import cli

    monkeypatch.chdir(cwd)
    runner = cli_runner()
    return runner.invoke(cli, ["fix", "--no-config", "--target", "1.36", *args, "."], catch_exceptions=False)


CRONJOB_TAIL = "metadata: {name: nightly}\nspec: {schedule: '@daily'}\n"
TAGGED = [  # (apiVersion and kind lines as written, as they must be written back)
    ("apiVersion: !!str batch/v1beta1\nkind: CronJob\n", "apiVersion: !!str batch/v1\nkind: CronJob\n"),
    ("apiVersion: batch/v1beta1\nkind: !!str CronJob\n", "apiVersion: batch/v1\nkind: !!str CronJob\n"),
    ('apiVersion: !!str "batch/v1beta1"\nkind: !!str \'CronJob\'\n',
     'apiVersion: !!str "batch/v1"\nkind: !!str \'CronJob\'\n'),
    ("apiVersion: |-\n  batch/v1beta1\nkind: >-\n  CronJob\n", "apiVersion: |-\n  batch/v1\nkind: >-\n  CronJob\n"),
    ("apiVersion: !!str |-\n  batch/v1beta1\nkind: CronJob\n", "apiVersion: !!str |-\n  batch/v1\nkind: CronJob\n"),
    ("apiVersion: !<tag:yaml.org,2002:str> batch/v1beta1\nkind: CronJob\n",
     "apiVersion: !<tag:yaml.org,2002:str> batch/v1\nkind: CronJob\n"),
    ("kind: !!str CronJob   # the kind first\napiVersion: !!str batch/v1beta1   # tagged\n",
     "kind: !!str CronJob   # the kind first\napiVersion: !!str batch/v1        # tagged\n"),
]


@pytest.mark.parametrize("written, expected", TAGGED)
def test_tagged_and_block_scalars_are_migrated_with_their_tag(written, expected, tmp_path, monkeypatch):
    """The scan reads `!!str batch/v1beta1` as batch/v1beta1 and reports it; fix migrates it, tag kept."""
    (tmp_path / "job.yaml").write_text(written + CRONJOB_TAIL)
    scanned = run_kubehop("scan", "--no-config", "--target", "1.36", "--format", "json", ".", cwd=tmp_path)
    assert "batch/v1beta1/CronJob" in scanned.stdout
    done = fix_in_process(tmp_path, monkeypatch, "--write")
    assert (tmp_path / "job.yaml").read_text() == expected + CRONJOB_TAIL
    assert done.exit_code == 0, done.stderr


def test_tagged_ingress_is_migrated_by_ruamel_too():
    """The ruamel.yaml path (document.py) keeps the tag as well: it is what edits objects the text
    edits decline."""
    from scanner.fix.document import rewrite_document

    lines = ["apiVersion: !!str extensions/v1beta1", "kind: !!str Ingress", "metadata: {name: a}",
             "spec:", "  backend: {serviceName: x, servicePort: 80}"]
    todo = {1: ("Ingress a", load_migrations()[("extensions/v1beta1", "Ingress")])}
    new, migrated, left = rewrite_document(lines, 1, "x.yaml", todo)
    assert (new, migrated, left) == (
        ["apiVersion: !!str networking.k8s.io/v1", "kind: !!str Ingress", "metadata: {name: a}", "spec:",
         "  defaultBackend: {service: {name: x, port: {number: 80}}}"], 1, [])


def test_an_apiversion_with_another_tag_is_left_with_the_reason(tmp_path, monkeypatch):
    text = "apiVersion: !custom batch/v1beta1\nkind: CronJob\n" + CRONJOB_TAIL
    (tmp_path / "job.yaml").write_text(text)
    done = fix_in_process(tmp_path, monkeypatch, "--write")
    assert (tmp_path / "job.yaml").read_text() == text
    assert left_lines(done.stderr) == [
        "not migrated: ./job.yaml:1: CronJob nightly: its apiVersion or kind is tagged !custom, which fix does "
        "not rewrite; edit it by hand"]
    assert done.exit_code == 1


def test_a_byte_order_mark_is_in_the_diff_and_git_applies_it(tmp_path):
    """read_file drops the BOM to parse; the diff's first line must still be the file's, BOM included."""
    if shutil.which("git") is None:
        pytest.skip("git is not on PATH (needed to apply the diff)")
    target = tmp_path / "ingress.yaml"
    target.write_bytes(b"\xef\xbb\xbf" + INGRESS.encode())
    (tmp_path / "crlf.yaml").write_bytes(b"\xef\xbb\xbf" + INGRESS.replace("\n", "\r\n").encode())
    done = fix(tmp_path)
    assert done.returncode == 0
    patch = tmp_path / "fix.patch"
    patch.write_text(done.stdout)
    subprocess.run(["git", "apply", "--check", str(patch)], cwd=tmp_path, check=True, capture_output=True)
    subprocess.run(["git", "apply", str(patch)], cwd=tmp_path, check=True)
    expected = (GOLDEN / "comments" / "expected" / "ingress.yaml").read_text()
    assert target.read_bytes() == b"\xef\xbb\xbf" + expected.encode()
    assert (tmp_path / "crlf.yaml").read_bytes() == b"\xef\xbb\xbf" + expected.replace("\n", "\r\n").encode()


def test_sigterm_while_writing_leaves_no_temporary_file_and_no_half_written_file(tmp_path):
    """A real `kubehop fix --write` on files of a few MiB, sent SIGTERM as soon as its first temporary
    file appears: it dies of the signal, and every file is as it was or as fixed, nothing else."""
    import signal
    import sys
    import time

    from tests.conftest import REPO

    cronjob = "apiVersion: batch/v1beta1\nkind: CronJob\nmetadata: {name: job-%d}\nspec: {schedule: '@daily'}\n"
    bulk = "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: bulk}\ndata:\n  blob: " + "x" * (3 << 20) + "\n"
    originals = {}
    for i in range(30):
        originals[f"job-{i:02}.yaml"] = (cronjob % i) + bulk
        (tmp_path / f"job-{i:02}.yaml").write_text(originals[f"job-{i:02}.yaml"])
    child = subprocess.Popen([sys.executable, "-m", "scanner", "fix", "--no-config", "--target", "1.36", "--write",
                              "."], cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(REPO)},
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 300
    while not any(name.endswith(".kubehop") for name in os.listdir(tmp_path)):
        assert child.poll() is None, "fix ended before writing its first file"
        assert time.monotonic() < deadline
        time.sleep(0.0005)
    child.send_signal(signal.SIGTERM)
    _, stderr = child.communicate(timeout=120)
    assert child.returncode == -signal.SIGTERM, stderr.decode()
    assert sorted(os.listdir(tmp_path)) == sorted(originals)  # no temporary file left
    fixed = 0
    for name, text in originals.items():
        now = (tmp_path / name).read_text()
        assert now in (text, text.replace("batch/v1beta1", "batch/v1", 1)), name
        fixed += now != text
    assert fixed < len(originals)


def test_a_failed_write_removes_its_temporary_file(tmp_path):
    from scanner.fix.write import write_fixed

    target = tmp_path / "ingress.yaml"
    target.write_text(INGRESS)
    with pytest.raises(UnicodeEncodeError):
        write_fixed(str(target), "apiVersion: \ud800\n")  # a lone surrogate cannot be written as UTF-8
    assert os.listdir(tmp_path) == ["ingress.yaml"] and target.read_text() == INGRESS


def test_a_diff_of_documents_rewritten_both_ways_applies(tmp_path):
    """In one file, documents the text edits rewrite and one only ruamel.yaml can (an anchor), with
    untouched documents between: the diff, cut from what changed, applies and gives what --write does."""
    if shutil.which("git") is None:
        pytest.skip("git is not on PATH (needed to apply the diff)")
    cronjob = "apiVersion: batch/v1beta1\nkind: CronJob\nmetadata: {name: job-%d}\nspec: {schedule: '@daily'}\n"
    anchored = (GOLDEN / "anchors" / "input" / "anchors.yaml").read_text().split("\n---\n")[0] + "\n"
    untouched = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c%d}\ndata:\n  a: b\n  c: d\n  e: f\n  g: h\n"
    documents = [INGRESS, untouched % 1, anchored, untouched % 2, *(cronjob % i for i in range(3)), untouched % 3]
    for folder in ("diff", "write"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "all.yaml").write_text("---\n".join(documents))
    done = fix(tmp_path / "diff")
    assert done.returncode == 0, done.stderr
    (tmp_path / "fix.patch").write_text(done.stdout)
    subprocess.run(["git", "apply", "--check", str(tmp_path / "fix.patch")], cwd=tmp_path / "diff", check=True)
    subprocess.run(["git", "apply", str(tmp_path / "fix.patch")], cwd=tmp_path / "diff", check=True)
    assert fix(tmp_path / "write", "--write").returncode == 0
    written = (tmp_path / "write" / "all.yaml").read_text()
    assert (tmp_path / "diff" / "all.yaml").read_text() == written
    assert written.count("batch/v1\n") == 3 and "networking.k8s.io/v1\n" in written
    assert done.stdout.count("\n@@ ") + done.stdout.startswith("@@") >= 2  # hunks apart, not one for the file
