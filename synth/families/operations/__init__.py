"""Operations families: route and bulk-close tickets, label mail by sender, hand work from one
service to another (mail to ticket, ticket to meeting), and recover from refused tool calls.

Importing this package registers every operations family; nothing else lives here."""

from . import bulk_conditional_update, cross_service_handoff, error_recovery, triage_routing  # noqa: F401
