"""Operations families: route and bulk-close tickets, label mail by sender, hand work from one
service to another (mail to ticket, ticket to meeting), and recover from refused tool calls."""
