"""For one apiVersion and kind: the migration to apply, why there is none, or nothing to do."""

from __future__ import annotations

from dataclasses import dataclass

from scanner.fix.migrations import Migration, load_migrations
from scanner.rulebook import Rulebook
from scanner.versions import Minor


@dataclass(frozen=True)
class Planner:
    target: Minor
    current: Minor | None
    rulebook: Rulebook
    ignore: tuple[str, ...] = ()  # rule ids (globs) the project ignores: their objects are left alone

    def decide(self, api_version: str, kind: str) -> Migration | str | None:
        """A Migration; a string saying why the object needs a person; None when nothing is due."""
        rule = self.rulebook.api_rules.get((api_version, kind))
        if rule is not None and rule.deprecated_in > self.target:
            return None  # still fine at the target: nothing to migrate yet
        migration = load_migrations().get((api_version, kind))
        if migration is not None:
            return self._too_early(migration, kind) or migration
        if rule is None:
            return None
        if rule.replacement is None:
            return f"{api_version} {kind} is gone with no successor: {rule.note}"
        return f"no mechanical migration to {rule.replacement} {rule.replacement_kind}: {rule.note}"

    def rule_ids(self, api_version: str, kind: str) -> list[str]:
        """The ids of the scan findings an object at `api_version` gets: the core API rule's, or the
        third-party CRD rules' (e.g. flux/image.toolkit.fluxcd.io/v1beta2/ImagePolicy)."""
        from scanner.components.catalog import load_crd_rules

        rule = self.rulebook.api_rules.get((api_version, kind))
        if rule is not None:
            return [rule.id]
        return [r.id for r in load_crd_rules() if (r.api_version, r.kind) == (api_version, kind)] \
            or [f"{api_version}/{kind}"]

    def _too_early(self, migration: Migration, kind: str) -> str | None:
        """Why the new version cannot be used yet, if the cluster does not serve it."""
        since = self.rulebook.served.first_served(migration.new, kind)
        if since is None:
            return None
        if since > self.target:
            return f"{migration.new} {kind} is served only from Kubernetes {since}, after the target {self.target}"
        if self.current is not None and since > self.current:
            return (f"{migration.new} {kind} is served only from Kubernetes {since} and the cluster runs "
                    f"{self.current}: migrate during the hop")
        return None
