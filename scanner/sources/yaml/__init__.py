"""YAML text into Manifests: a file's (yamldoc, with what a document must pass first: yamlcheck), and
a tool's output pointed back at the file a person edits (rendered, line_map)."""
