"""The data cache (scanner/data.py): a data folder is kept as one entry, keyed by every file's bytes and
its schema's, with the values a reader asks for later (the catalog's releases) packed apart."""

from __future__ import annotations

import shutil

from scanner import data


def _unpacked(loaded):
    return [(where, {key: value.value() if isinstance(value, data.Later) else value for key, value in document.items()})
            for where, document in loaded]


def test_a_folder_read_from_its_entry_is_the_folder_parsed(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("KUBEHOP_NO_CACHE", raising=False)
    written = data.load_folder("rules/hop-notes", later=("notes",))  # no entry yet: parsed, validated, kept
    read = data.load_folder("rules/hop-notes", later=("notes",))
    monkeypatch.setenv("KUBEHOP_NO_CACHE", "1")
    parsed = data.load_folder("rules/hop-notes")
    assert all(isinstance(document["notes"], data.Later) for _, document in written + read)
    assert _unpacked(written) == _unpacked(read) == parsed
    assert [list(document) for _, document in read] == [list(document) for _, document in parsed]  # keys in order
    entries = list((tmp_path / "cache" / "kubehop" / "data").iterdir())
    assert len(entries) == len(parsed) + 1  # each file's, and the folder's


def test_an_edited_file_is_read_again(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("KUBEHOP_NO_CACHE", raising=False)
    shutil.copytree(data.data_root() / "rules" / "hop-notes", tmp_path / "rules" / "hop-notes")
    [(_, first), *_] = data.load_folder("rules/hop-notes", root=tmp_path)
    edited = sorted((tmp_path / "rules" / "hop-notes").glob("*.yaml"))[0]
    edited.write_text(edited.read_text().replace(first["notes"][0]["title"], "edited", 1))  # its first note's title
    [(_, again), *_] = data.load_folder("rules/hop-notes", root=tmp_path)
    assert again["notes"][0]["title"] == "edited"
