"""CRM families: log a customer's call and move their deal, mail the owners of this month's
renewals, merge a duplicate contact without losing its history, and keep up with a deal a
colleague silently reassigned or repriced between two turns."""
