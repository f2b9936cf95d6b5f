"""Third-party components: what the data knows about them (catalog) and what a tree pins (detect)."""
