"""Mail part of a world's seed: 200 messages in the user's mailbox.

Threads of customer requests, colleagues' questions, invoices, meeting requests, mail the
user started, and newsletters as distractors, spread over the six weeks before the clock
start; older threads are read and mostly archived, recent ones partly unread. A few
messages carry attachments pointing at files the files service created. The words come
from the world's vocabulary.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from faker import Faker

from coworkenv.state import Workspace, format_time

from . import store
from .schema import Attachment, Folder

if TYPE_CHECKING:
    from coworkenv.world import Person, World

MESSAGE_COUNT = 200
DAYS_BACK = 42


@dataclass
class _Mail:
    sender: str
    to: list[str]
    subject: str
    body: str
    at: datetime
    cc: list[str] = field(default_factory=list)
    attachments: list[str] = field(default_factory=list)
    forward: bool = False


@dataclass
class _Thread:
    kind: str
    mails: list[_Mail]
    labels: list[str] = field(default_factory=list)


class _Writer:
    """Builds the threads of the demo mailbox from one random generator and one faker."""

    def __init__(self, world: World, rng: random.Random, fake: Faker, files: list[str]) -> None:
        self.world, self.rng, self.fake, self.files = world, rng, fake, files
        self.words = world.vocabulary
        # Attachments draw from their own generator, so the mailbox is the same message for
        # message whether or not the files service is enabled (only attachments differ).
        self.attachment_rng = random.Random(f"{world.seed}:mail:attachments")
        self.user = world.user_person
        self.colleagues = [p for p in world.staff if p.email != self.user.email]
        self.helpers = [p for p in world.team_members(self.user.team) if p.email != self.user.email]
        self.finance = world.team_members(world.team("finance"))

    def first(self, person: Person) -> str:
        return person.name.split()[0]

    def later(self, at: datetime, low: float, high: float) -> datetime:
        return at + timedelta(hours=self.rng.uniform(low, high))

    def start_time(self) -> datetime:
        day = self.world.start - timedelta(days=self.rng.randint(1, DAYS_BACK))
        return day.replace(hour=self.rng.randint(7, 17), minute=self.rng.randrange(60), second=0)

    def letter(self, to: Person, text: str, sender: Person) -> str:
        return f"Hi {self.first(to)},\n\n{text} {self.rng.choice(self.words.closers)}\n\nBest regards,\n{sender.name}"

    def attachment(self) -> list[str]:
        pick = self.attachment_rng.random()
        if not self.files:
            return []
        hinted = [f for f in self.files if any(h in f.lower() for h in self.words.attachment_hints)]
        pool = hinted or self.files
        return [pool[int(pick * len(pool))]]

    def to_user(self, sender: Person, subject: str, text: str, at: datetime, **extra: Any) -> _Mail:
        return _Mail(
            sender.email, [self.user.email], subject, self.letter(self.user, text, sender), at, **extra
        )

    def from_user(self, to: Person, subject: str, text: str, at: datetime, **extra: Any) -> _Mail:
        return _Mail(self.user.email, [to.email], subject, self.letter(to, text, self.user), at, **extra)

    def customer(self) -> _Thread:
        person = self.rng.choice(self.world.contacts)
        topic = self.rng.choice(self.words.customer_requests)
        year = self.world.start.year
        values = {
            "order": f"#{self.rng.randint(10000, 99999)}",
            "n": f"{year}-{self.rng.randint(1, 400):04d}",
        }
        subject, text = topic.title.format(**values), topic.body
        at = self.start_time()
        mails = [self.to_user(person, subject, text.format(**values), at)]
        if self.rng.random() < 0.7:
            helper = self.rng.choice(self.helpers or self.colleagues)
            cc = [helper.email] if self.rng.random() < 0.4 else []
            at = self.later(at, 0.5, 20)
            mails.append(
                self.from_user(person, "Re: " + subject, self.rng.choice(self.words.user_answers), at, cc=cc)
            )
            if self.rng.random() < 0.5:
                at = self.later(at, 1, 30)
                mails.append(
                    self.to_user(person, "Re: " + subject, self.rng.choice(self.words.customer_answers), at)
                )
        return _Thread(
            "customer", mails, ["customers"] + (["urgent"] if subject.startswith("Urgent") else [])
        )

    def internal(self) -> _Thread:
        person = self.rng.choice(self.colleagues)
        topic = self.rng.choice(self.words.internal_requests)
        subject, text = topic.title, topic.body
        at = self.start_time()
        mails = [self.to_user(person, subject, text, at)]
        if self.rng.random() < 0.6:
            at = self.later(at, 0.2, 8)
            mails.append(
                self.from_user(person, "Re: " + subject, self.rng.choice(self.words.internal_answers), at)
            )
        return _Thread("internal", mails, ["follow-up"] if self.rng.random() < 0.2 else [])

    def invoice(self) -> _Thread:
        vendor = self.rng.choice(self.world.contacts)
        number = f"INV-{self.world.start.year}-{self.rng.randint(1, 400):04d}"
        amount = f"{self.rng.randint(800, 24000):,}.00 {self.world.currency}"
        text = f"Please find attached invoice {number} for {amount}, due in 30 days."
        subject = f"Invoice {number} from {vendor.company}"
        at = self.start_time()
        mails = [self.to_user(vendor, subject, text, at, attachments=self.attachment())]
        if self.finance and self.rng.random() < 0.4:
            accountant = self.rng.choice(self.finance)
            at = self.later(at, 0.5, 6)
            note = f"Hi {self.first(accountant)}, forwarding this invoice for processing."
            forward = _Mail(self.user.email, [accountant.email], f"Fwd: {subject}", note, at, forward=True)
            forward.attachments = mails[0].attachments
            mails.append(forward)
        return _Thread("invoice", mails, ["invoices"])

    def meeting(self) -> _Thread:
        person = self.rng.choice(self.colleagues)
        topic = self.rng.choice(self.words.meeting_topics)
        others = [p.email for p in self.rng.sample(self.colleagues, 2) if p.email != person.email]
        slot = f"{self.rng.choice(['Monday', 'Tuesday', 'Wednesday', 'Thursday'])} at {self.rng.randint(9, 16)}:00"
        text = f"Could we meet about {topic} on {slot}? Thirty minutes should be enough."
        at = self.start_time()
        mails = [self.to_user(person, f"Meeting request: {topic}", text, at, cc=others)]
        if self.rng.random() < 0.7:
            at = self.later(at, 0.3, 6)
            answer = f"{slot} works for me."
            mails.append(self.from_user(person, f"Re: Meeting request: {topic}", answer, at, cc=others))
        return _Thread("meeting", mails, ["meetings"])

    def newsletter(self) -> _Thread:
        letter = self.rng.choice(self.words.newsletters)
        sender = letter.sender
        subject = letter.subject.format(n=self.rng.randint(10, 99), catch=self.fake.catch_phrase())
        paragraphs = [self.fake.paragraph(nb_sentences=4) for _ in range(3)]
        body = "\n\n".join([*paragraphs, "Unsubscribe: reply STOP."])
        mail = _Mail(sender, [self.user.email], subject, body, self.start_time())
        return _Thread("newsletter", [mail], ["newsletters"] if self.rng.random() < 0.5 else [])

    def started_by_user(self) -> _Thread:
        person = self.rng.choice(self.colleagues)
        subject = self.rng.choice(self.words.outbound_subjects)
        at = self.start_time()
        text = "Sharing this ahead of our next sync; the details are below."
        files = self.attachment() if self.rng.random() < 0.3 else []
        mails = [self.from_user(person, subject, text, at, attachments=files)]
        if self.rng.random() < 0.5:
            at = self.later(at, 1, 24)
            mails.append(
                self.to_user(person, "Re: " + subject, self.rng.choice(self.words.internal_answers), at)
            )
        return _Thread("started_by_user", mails)

    def thread(self) -> _Thread:
        kinds = [
            self.customer,
            self.internal,
            self.invoice,
            self.meeting,
            self.newsletter,
            self.started_by_user,
        ]
        return self.rng.choices(kinds, weights=[35, 18, 12, 13, 14, 8])[0]()


DRAFT_COUNT = 4


@dataclass
class _Planned:
    """One message to insert: where it goes, and which planned message it answers or forwards."""

    mail: _Mail
    thread: int
    position: int
    folder: Folder
    is_read: bool
    is_flagged: bool = False
    labels: list[str] = field(default_factory=list)
    parent: int | None = None


def populate(ws: Workspace, world: World, rng: random.Random) -> None:
    """Fill the user's mailbox with 200 messages (threads and a few drafts), inserted in
    time order so that message ids follow arrival."""
    files: list[str] = []
    if store.files_enabled(ws):
        files = [
            r[0] for r in ws.conn.execute("SELECT path FROM files_nodes WHERE kind = 'file' ORDER BY path")
        ]
    writer = _Writer(world, rng, world.faker("mail"), files)
    plan = _plan_threads(writer, rng)
    plan += _plan_drafts(writer, plan, rng)
    with store.search_index_written_at_end(ws):
        _insert(ws, world, plan)


def _insert(ws: Workspace, world: World, plan: list[_Planned]) -> None:
    """The planned messages, in time order (so that message ids follow arrival).

    They go in through the store, as `add_message` puts them, without its lookups: every
    parent is a planned message of the same thread, inserted before it, and every
    attachment one of the files read at the start."""
    owner = store.normalize_address(world.user, "owner")
    ids: dict[int, int] = {}
    threads: dict[int, int] = {}
    for index in sorted(range(len(plan)), key=lambda i: (plan[i].mail.at, plan[i].thread, plan[i].position)):
        item, mail = plan[index], plan[index].mail
        parent = ids[item.parent] if item.parent is not None else None
        to = store.normalize_addresses(mail.to, "to")
        cc = store.normalize_addresses(mail.cc, "cc", skip=to)
        paths = dict.fromkeys(store.normalize_path(p) for p in mail.attachments)
        message_id = store.insert_message(
            ws,
            owner=owner,
            folder=item.folder,
            from_addr=store.normalize_address(mail.sender, "from_addr"),
            to=to,
            cc=cc,
            bcc=[],
            subject=store.clean(mail.subject),
            body=store.clean(mail.body),
            sent_at=store.time_arg(format_time(mail.at), "sent_at"),
            is_read=item.is_read,
            is_flagged=item.is_flagged,
            in_reply_to=None if mail.forward else parent,
            forwarded_from=parent if mail.forward else None,
            thread_id=threads.get(item.thread),
            labels=[store.normalize_label(x) for x in item.labels],
            attachments=[Attachment(path=path, name=path.rsplit("/", 1)[-1]) for path in paths],
        )
        ids[index] = message_id
        threads.setdefault(item.thread, message_id)


def _plan_threads(writer: _Writer, rng: random.Random) -> list[_Planned]:
    """Threads until there are 200 messages less the drafts: folders, read state, flags, labels."""
    start, owner = writer.world.start, writer.user.email
    plan: list[_Planned] = []
    thread_number = 0
    while len(plan) < MESSAGE_COUNT - DRAFT_COUNT:
        thread = writer.thread()
        mails = [m for m in thread.mails if m.at < start - timedelta(minutes=5)]
        archived = (
            thread.kind != "newsletter" and start - mails[-1].at > timedelta(days=14) and rng.random() < 0.6
        )
        trashed = thread.kind == "newsletter" and rng.random() < 0.35
        for position, mail in enumerate(mails[: MESSAGE_COUNT - DRAFT_COUNT - len(plan)]):
            mine = mail.sender == owner
            folder: Folder
            if mine:
                folder, is_read = ("archive" if archived else "sent"), True
            else:
                folder = "trash" if trashed else "archive" if archived else "inbox"
                recent = start - mail.at < timedelta(days=4)
                is_read = rng.random() < (0.35 if thread.kind == "newsletter" else 0.45 if recent else 0.97)
            flagged = not mine and thread.kind in ("customer", "invoice") and rng.random() < 0.15
            parent = len(plan) - 1 if position else None
            labels = [] if mine else thread.labels
            plan.append(_Planned(mail, thread_number, position, folder, is_read, flagged, labels, parent))
        thread_number += 1
    return plan


def _plan_drafts(writer: _Writer, plan: list[_Planned], rng: random.Random) -> list[_Planned]:
    """Replies the user started to customers still waiting in the inbox, and one new message."""
    start, owner = writer.world.start, writer.user.email
    waiting = [
        i
        for i, item in enumerate(plan)
        if item.folder == "inbox"
        and "customers" in item.labels
        and item.mail.sender != owner
        and (i + 1 == len(plan) or plan[i + 1].thread != item.thread)
    ]
    drafts = []
    for index in sorted(rng.sample(waiting, min(DRAFT_COUNT - 1, len(waiting)))):
        parent = plan[index]
        at = parent.mail.at + (start - parent.mail.at) * rng.uniform(0.3, 0.9)
        subject = "Re: " + parent.mail.subject.removeprefix("Re: ")
        body = f"Hello,\n\n{rng.choice(writer.words.draft_openings)}"
        mail = _Mail(owner, [parent.mail.sender], subject, body, at)
        drafts.append(_Planned(mail, parent.thread, parent.position + 1, "drafts", True, parent=index))
    for _ in range(DRAFT_COUNT - len(drafts)):
        person = rng.choice(writer.colleagues)
        note = writer.words.draft_note
        body = f"Hi {writer.first(person)},\n\n{note.body}"
        at = start - timedelta(minutes=rng.randint(10, 600))
        mail = _Mail(owner, [person.email], note.title, body, at)
        drafts.append(_Planned(mail, -1 - len(drafts), 0, "drafts", True))
    return drafts
