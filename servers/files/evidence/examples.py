"""One document of each kind, as data: what the docs show, the tests pin and the benchmarks
render. Each value validates as a `DocumentSpec` and can be planted with the files world
operation `add_document`."""

from typing import Any

SELLER = {"name": "Brightline Supplies GmbH", "address": ["Hafenstrasse 12", "20457 Hamburg"]}
BUYER = {"name": "Northwind Traders", "address": ["1 Market Street", "Berlin"]}
EXAMPLES: dict[str, dict[str, Any]] = {
    "invoice": {
        "kind": "invoice",
        "number": "INV-2026-0412",
        "issued": "2026-02-20",
        "due": "2026-03-22",
        "seller": SELLER,
        "buyer": BUYER,
        "purchase_order": "PO-7731",
        "items": [
            {"description": "Cable set, 5 m", "quantity": 12, "unit_price": "18.40"},
            {"description": "Wall bracket", "quantity": "2.5", "unit_price": "7.10"},
            {"description": "Installation, hours", "quantity": 3, "unit_price": "95.00"},
        ],
        "tax_percent": "19",
        "notes": ["Payment within 30 days to DE44 5001 0517 5407 3249 31."],
    },
    "purchase_order": {
        "kind": "purchase_order",
        "number": "PO-7731",
        "issued": "2026-02-01",
        "deliver_by": "2026-02-15",
        "buyer": BUYER,
        "supplier": SELLER,
        "items": [{"description": "Cable set, 5 m", "quantity": 12, "unit_price": "18.40"}],
        "approved_by": "Dana Fox",
    },
    "receipt": {
        "kind": "receipt",
        "merchant": "Cafe Linde",
        "address": ["Lindenstr. 4", "Berlin"],
        "when": "2026-02-27 12:41",
        "items": [
            {"description": "Lunch menu", "amount": "14.90"},
            {"description": "Espresso", "amount": "2.80"},
            {"description": "Water 0.5l", "amount": "3.10"},
        ],
        "skew_degrees": -2.5,
        "noise": 0.4,
    },
    "bar_chart": {
        "kind": "bar_chart",
        "title": "Revenue by quarter 2025",
        "categories": ["Q1", "Q2", "Q3", "Q4"],
        "series": [
            {"name": "EMEA", "values": [1200, 1350, 980, 1610]},
            {"name": "Americas", "values": [800, 760, 1020, 1100]},
        ],
        "unit": "kEUR",
    },
    "line_chart": {
        "kind": "line_chart",
        "title": "Open tickets per week",
        "categories": ["W1", "W2", "W3", "W4", "W5", "W6"],
        "series": [{"name": "Open", "values": [40, 42.5, 38, 51, 47, 45]}],
    },
    "error_dialog": {
        "kind": "error_dialog",
        "application": "Ledger Desktop",
        "title": "Sync failed",
        "message": ["The connection to the accounting server was reset while uploading batch 2231."],
        "code": "LDG-5003",
        "buttons": ["Retry", "Cancel"],
    },
    "form": {
        "kind": "form",
        "title": "Employee address change",
        "fields": [
            {"label": "Name", "value": "Maria Lopez"},
            {"label": "Employee ID", "value": "E-10442"},
            {"label": "New address", "value": "Am Kanal 7, 14467 Potsdam"},
        ],
        "signed_by": "M. Lopez",
        "signed_on": "2026-03-01",
        "noise": 0.15,
        "skew_degrees": 1.2,
    },
}


def file_name(kind: str) -> str:
    """The file name the example of `kind` is planted under: `invoice.pdf`, `receipt.jpg`."""
    ending = {"invoice": ".pdf", "purchase_order": ".pdf", "receipt": ".jpg"}.get(kind, ".png")
    return kind.replace("_", "-") + ending
