"""YAML problems in kubehop's words, the same whichever reader meets them: the sources' reader
(yamldoc, yamlcheck), a rules folder (scanner.data), the configuration.

`yaml_error` says 'invalid YAML: <problem>' at the line libyaml names; nesting past MAX_DEPTH is
TOO_DEEP whether kubehop's own check (yamlcheck) or libyaml's limit stops first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scanner.model import Diagnostic

if TYPE_CHECKING:
    import yaml

# Kubernetes objects are a few dozen levels deep at most; libyaml itself
# crashes (C stack) on flow nesting in the tens of thousands.
MAX_DEPTH = 256
TOO_DEEP = f"nesting deeper than {MAX_DEPTH} levels; document skipped"

_LIBYAML_DEPTH_LIMIT = "exceeded maximum nesting depth"  # the limit newer libyaml builds stop at


def yaml_error(path: str, err: yaml.YAMLError) -> Diagnostic:
    """'invalid YAML: <problem>' at the line libyaml names."""
    mark = getattr(err, "problem_mark", None) or getattr(err, "context_mark", None)
    problem = getattr(err, "problem", None) or str(err)
    context = getattr(err, "context", None)
    if _LIBYAML_DEPTH_LIMIT in problem:
        # Newer libyaml stops at a nesting limit of its own before kubehop's depth check sees the
        # tree: the same reason, worded the same way whichever parser stops first.
        return Diagnostic(path, TOO_DEEP, mark.line + 1 if mark else None)
    text = f"invalid YAML: {context + ', ' if context else ''}{problem}"
    return Diagnostic(path, text.replace("\n", " "), mark.line + 1 if mark else None)
