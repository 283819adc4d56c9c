"""The one exception type of the state layer."""


class WorkspaceError(Exception):
    """A workspace could not be created, opened, forked or saved as asked.

    The message says what was wrong and what to do instead.
    """
