"""Kustomizations into Manifests (source.py: the entry `collect` calls): what a kustomization refers
to, found before any build (refs), the folders built as Flux builds them (build, flux) in a
throwaway view of the repository (mirror), helmCharts rendered by kubehop's helm (charts, helm),
each object pointed back at its file (origins), kustomize's errors read for the user (errors), and
the files applied as patches (patches)."""
