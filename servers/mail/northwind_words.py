"""Northwind's mail words (the demo mailbox): subjects, request texts, answers and newsletter senders."""

CUSTOMER_SUBJECTS = [
    (
        "Order {order} arrived damaged",
        "Two of the boxes in order {order} were crushed and the parts inside are bent.",
    ),
    (
        "Question about invoice INV-{n}",
        "Invoice INV-{n} lists 40 units, but we only ordered and received 35.",
    ),
    (
        "Cannot log in to the customer portal",
        "Since yesterday the portal rejects my password and the reset link.",
    ),
    (
        "Delivery date for order {order}",
        "Could you confirm when order {order} will ship? Our site opens next week.",
    ),
    (
        "Refund request for order {order}",
        "We returned order {order} two weeks ago and have not seen the refund yet.",
    ),
    ("Change of billing address", "Please update our billing address for all future invoices."),
    (
        "Missing items in shipment {order}",
        "Shipment {order} came without the mounting kits listed on the slip.",
    ),
    (
        "Urgent: production line down",
        "Our line stopped because the controller you shipped reports error E42.",
    ),
]
CUSTOMER_ANSWERS = [
    "Thanks, that solves it for us.",
    "Great, thank you for the quick help.",
    "Understood. Could you also send the tracking number once it ships?",
    "That works. Please keep me posted.",
]
USER_ANSWERS = [
    "I have opened a ticket for this and our team is on it; you will hear from us within a day.",
    "I checked with our warehouse: a replacement leaves tomorrow morning, tracking to follow.",
    "I am sorry for the trouble. The refund was approved today and should arrive within five days.",
    "Thanks for flagging this. I have corrected the record on our side.",
]
INTERNAL_SUBJECTS = [
    (
        "Coverage for the weekend shift",
        "Could someone from your team cover Saturday's queue? I am one short.",
    ),
    (
        "Can you review the new refund macro?",
        "I drafted a new macro for refund requests; could you take a look?",
    ),
    ("Escalation policy question", "When a customer reports a line-down, do we page engineering right away?"),
    ("Customer churn numbers for March", "Do you have the churn numbers for the accounts support touched?"),
    ("Handover notes for the ticket backlog", "Before I go on leave: where should I put the handover notes?"),
    ("SLA breach on two enterprise tickets", "Two enterprise tickets breached the four-hour SLA last night."),
]
INTERNAL_ANSWERS = [
    "Yes, I can take care of that.",
    "Good point; let's discuss it in our weekly sync.",
    "Done, see my comments inline.",
    "I'll check and get back to you by tomorrow.",
]
MEETING_TOPICS = ["Q2 support staffing", "Globex renewal", "Portal outage review", "Onboarding the new hire"]
NEWSLETTERS = [
    ("digest@supportweekly.example", "Support Weekly #{n}: {catch}"),
    ("news@saasinsider.example", "SaaS Insider: {catch}"),
    ("events@cxsummit.example", "CX Summit {n}: early-bird tickets end soon"),
    ("no-reply@status.cloudhost.example", "[Cloudhost] Scheduled maintenance window {n}"),
]
OUTBOUND_SUBJECTS = [
    "Follow-up on the ticket backlog",
    "Updated SLA document",
    "Support metrics for last week",
    "Training plan for the new specialists",
]
ATTACHMENT_HINTS = ("invoice", "contract", "report", "sla", "budget", "plan")
CLOSERS = [
    "Let me know if you need anything else.",
    "Happy to jump on a call if that is easier.",
    "Thanks in advance for your help.",
    "I would appreciate a quick answer.",
    "Please let me know by the end of the week.",
    "I have copied the details below for reference.",
]
DRAFT_OPENINGS = [
    "Thanks for your patience. I am still checking with our warehouse and will",
    "Quick update: engineering reproduced the issue and",
    "Sorry for the slow reply. Regarding your question,",
]
DRAFT_NOTE = ("Notes for the support all-hands", "Draft agenda: queue health, the SLA review, and")
