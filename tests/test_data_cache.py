"""The data cache (scanner/data.py): a data folder is kept as one entry, keyed by every file's bytes and
its schema's, with the values a reader asks for later (the catalog's releases) packed apart; and
looked up first by the files' metadata, for files that settled (none changed in the last 2 s)."""

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
    assert len(entries) == len(parsed) + 2  # each file's, the folder's, and the folder's by its files' metadata


def test_an_edited_file_is_read_again(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("KUBEHOP_NO_CACHE", raising=False)
    shutil.copytree(data.data_root() / "rules" / "hop-notes", tmp_path / "rules" / "hop-notes")
    [(_, first), *_] = data.load_folder("rules/hop-notes", root=tmp_path)
    edited = sorted((tmp_path / "rules" / "hop-notes").glob("*.yaml"))[0]
    edited.write_text(edited.read_text().replace(first["notes"][0]["title"], "edited", 1))  # its first note's title
    [(_, again), *_] = data.load_folder("rules/hop-notes", root=tmp_path)
    assert again["notes"][0]["title"] == "edited"


def test_settled_files_are_found_by_their_metadata_without_being_read(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("KUBEHOP_NO_CACHE", raising=False)
    written = data.load_folder("rules/hop-notes")  # the checkout's files: settled
    one = data.load("rules/kubernetes.yaml")

    def unread(path):
        raise AssertionError(f"{path} was read")

    monkeypatch.setattr(data, "_read_bytes", unread)
    assert data.load_folder("rules/hop-notes") == written
    assert data.load("rules/kubernetes.yaml") == one


def test_files_changed_within_the_settling_time_are_read_every_time(tmp_path, monkeypatch):
    """A file written twice within one tick of the file system's clock may keep its times: an entry by
    metadata is written only for files that settled, and these were copied just now."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("KUBEHOP_NO_CACHE", raising=False)
    shutil.copytree(data.data_root() / "rules" / "hop-notes", tmp_path / "rules" / "hop-notes")
    first = data.load_folder("rules/hop-notes", root=tmp_path)
    read = []
    real = data._read_bytes
    monkeypatch.setattr(data, "_read_bytes", lambda path: read.append(path) or real(path))
    assert data.load_folder("rules/hop-notes", root=tmp_path) == first
    assert len(read) == len(first)
