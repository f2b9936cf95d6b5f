"""Helm charts into Manifests (source.py: the entry `collect` calls): rendered by the real helm at
the target's Capabilities (render, capture, discovery, output), the charts prepared for it
(chart_copies, chart_dependencies, chart_schemas), Flux HelmReleases' charts and values (flux),
and what is read as text when helm does not render (chart_fallback, chart_templates,
template_branches)."""
