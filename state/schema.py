"""How a service declares the tables it owns in a workspace, and how changes to them are judged."""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class FollowUp:
    """The route a service offers when a row is final and cannot change any more (a closed
    ticket): a new row of the same table, linked to it, carries on in its place.

    - `final`: a where filter; rows that match it can no longer change.
    - `link`: `(table, one end's column, other end's column)` of the link rows.
    - `link_where`: a where filter the link row must match (its kind).
    """

    final: dict[str, Any]
    link: tuple[str, str, str]
    link_where: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class TableRules:
    """What a service says about changes to one of its tables, for the collateral guard
    (`coworkenv.verifiers.collateral`): which changes are harmless whatever the task, and
    how a row the agent added is matched with a row the reference solution added.

    - `match`: columns an added row must share with a row the reference solution added
      (a reference to a row that is itself new compares as "some new row").
    - `parent`: `(column, table)` when each row belongs to a row of another table (a
      recipient to its message). With `follows_parent`, rows added under a new parent are
      explained by that parent (the recipients of a reply are judged with the reply).
    - `harmless_columns`: changes to these columns are always explained (read marks, flags).
    - `bookkeeping`: columns that record when and by whom a row changed; never collateral.
    - `harmless_added`: a where filter; added rows that match it are harmless (a draft saved
      and never sent), however many, also beyond those of the kind the goal adds itself.
      With `harmless_on_footprint`, only under a parent row the task's goal touches (an
      internal note on the ticket being escalated).
    - `destructive`: column values that remove, close or cancel an object (a mail moved to
      trash); the default removal rule forbids them outside the footprint.
    - `fan_out`: `(child table, its parent column, its value column)`: a row added beyond
      what the goal asks is still explained when every child value is one the goal's added
      rows have and no other added row took it yet (one mail to each person instead of one
      mail to all of them).

    A row the agent adds must also agree with a row the reference solution added on every
    other column (its status, times, queue, priority...) except its primary key,
    `bookkeeping`, `harmless_columns` and:
    - `free`: columns whose value is the agent's to choose or the system's to set (when
      the row was made, the time zone an event is displayed in, how a mail is threaded).
    - `free_text`: columns the agent words itself (a title, a body); free unless the user
      quoted the reference solution's value verbatim, in quotation marks, in a user message
      (then the row must hold that text, ignoring case and spacing).
    - `derived`: values computed from a row and compared like columns (an event's length),
      so they stay checked when a task frees the columns they come from (`Guards.free`).
    - `follow_up`: the route the service's own tool error offers for a row that is final
      (`FollowUp`): when the agent made a row of the goal final (closed a ticket the
      reference only resolved) and then, told it cannot change, added a new row linked to
      it, the new row stands for the old one: it is judged against the reference's row, its
      link and the rows under it (a comment on it) are explained as the old row's would be.
    """

    match: tuple[str, ...] = ()
    parent: tuple[str, str] | None = None
    follows_parent: bool = False
    harmless_columns: tuple[str, ...] = ()
    bookkeeping: tuple[str, ...] = ()
    harmless_added: dict[str, Any] | None = None
    harmless_on_footprint: bool = False
    destructive: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    fan_out: tuple[str, str, str] | None = None
    free: tuple[str, ...] = ()
    free_text: tuple[str, ...] = ()
    derived: dict[str, Callable[[dict[str, Any]], Any]] = field(default_factory=dict)
    follow_up: FollowUp | None = None


@dataclass(frozen=True)
class ServiceSchema:
    """The tables one service owns, as a SQL script run once when a workspace is created,
    and the rules by which changes to them are judged (`changes`, by table name).

    Table names must start with the service name and an underscore (`mail_messages`),
    so that one database can hold every service side by side.
    """

    name: str
    sql: str
    changes: dict[str, TableRules] = field(default_factory=dict)
