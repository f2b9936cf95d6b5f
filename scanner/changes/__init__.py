"""A plan window written as the change set its pull request needs: `kubehop plan --window N`.

`build.change_set` assembles it from the plan and the analysis it is a view of: the hop's upgrade
orders and cluster version variables (`hop`), the component moves written where the running system
reads each pin, in the pin's style (`pin_edits`, `pin_text`, `release_version`), the API migrations
the window needs (`migrations`, with `kubehop fix`'s engine), each edit checked as it is made
(`texts`, `scalar_edit`); `apply` writes it. What cannot be written is listed for a person
(`model.Manual`), with the exact command where one exists; nothing is guessed.
"""

from scanner.changes.build import NoSuchWindow, change_set, tree_root
from scanner.changes.model import ChangeSet, Edit, FileChange, Manual, Migrated, Move

__all__ = ["ChangeSet", "Edit", "FileChange", "Manual", "Migrated", "Move", "NoSuchWindow", "change_set", "tree_root"]
