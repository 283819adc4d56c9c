"""Directory tables: teams and people (colleagues and external contacts)."""

from pydantic import BaseModel, Field

from coworkenv.state import ServiceSchema, TableRules

SCHEMA = ServiceSchema(
    name="directory",
    sql="""
CREATE TABLE directory_teams (
    name TEXT PRIMARY KEY,
    description TEXT NOT NULL DEFAULT '',
    lead_email TEXT
);
CREATE TABLE directory_people (
    email TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    title TEXT NOT NULL DEFAULT '',
    team TEXT REFERENCES directory_teams(name),
    manager_email TEXT,
    time_zone TEXT NOT NULL DEFAULT 'UTC',
    internal INTEGER NOT NULL DEFAULT 1,
    company TEXT NOT NULL DEFAULT '',
    phone TEXT NOT NULL DEFAULT ''
);
CREATE INDEX directory_people_team ON directory_people(team);
""",
    changes={
        "directory_teams": TableRules(match=("name",), free_text=("description",)),
        "directory_people": TableRules(match=("email",)),
    },
)


class Person(BaseModel):
    """A person in the directory: a colleague (internal) or an external contact."""

    email: str
    name: str
    title: str
    team: str | None
    manager_email: str | None
    time_zone: str = Field(description="IANA time zone, e.g. Europe/Berlin")
    internal: bool
    company: str
    phone: str


class PersonList(BaseModel):
    """One page of people. `total` counts every match, not just this page."""

    total: int
    people: list[Person]


class Team(BaseModel):
    """A team with its lead and members."""

    name: str
    description: str
    lead_email: str | None
    members: list[Person]


class TeamSummary(BaseModel):
    name: str
    description: str
    lead_email: str | None
    member_count: int


class TeamList(BaseModel):
    teams: list[TeamSummary]


def person_from_row(row: dict) -> Person:
    return Person(**{**row, "internal": bool(row["internal"])})
