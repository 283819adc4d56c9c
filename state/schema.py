"""How a service declares the tables it owns in a workspace."""

from dataclasses import dataclass


@dataclass(frozen=True)
class ServiceSchema:
    """The tables one service owns, as a SQL script run once when a workspace is created.

    Table names must start with the service name and an underscore (`mail_messages`),
    so that one database can hold every service side by side.
    """

    name: str
    sql: str
