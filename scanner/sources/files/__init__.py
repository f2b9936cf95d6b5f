"""The tree's own files: found and read safely (walk), each plain file read into Manifests
(source), in worker processes when there are many (parallel), and which of their nodes a scan
keeps (retention)."""
