"""Communication families: answering colleagues from files and tickets, cleaning up and
chasing mail, and staying safe when mail or files carry injected instructions or when
someone outside asks for internal data.

Every family plants its own items (files, mails, tickets) on top of the demo workspace and
checks state, not wording: a reply in the right thread quoting the right figure, the
folders of the right messages, no mail to an attacker.
"""
