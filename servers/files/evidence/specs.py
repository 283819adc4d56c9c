"""What a document says: one model per kind of document, rendered by `evidence.render`.

A spec holds the facts (numbers, names, dates) and how the paper or screen looks (skew,
noise, format); the renderer draws the facts and nothing else, so a task that plants a
document knows every figure it shows. Amounts are decimals with two places. Text fields
are limited to what fits where they are drawn, so no fact is ever cut off.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

Money = Annotated[Decimal, Field(ge=Decimal("-1000000000"), le=Decimal("1000000000"), decimal_places=2)]
Line = Annotated[str, Field(min_length=1, max_length=120)]
Label = Annotated[str, Field(min_length=1, max_length=40)]


class _Spec(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Party(_Spec):
    """A company on a trade document: its name and address lines."""

    name: Line
    address: list[Line] = Field(default=[], max_length=4)


class TradeItem(_Spec):
    """One row of an invoice or purchase order; its amount is quantity x unit price."""

    description: Annotated[str, Field(min_length=1, max_length=50)]
    quantity: Annotated[Decimal, Field(gt=0, le=1_000_000, decimal_places=3)]
    unit_price: Money

    @property
    def amount(self) -> Decimal:
        return (self.quantity * self.unit_price).quantize(Decimal("0.01"))


class _Trade(_Spec):
    number: Label
    issued: date
    currency: Annotated[str, Field(pattern=r"^[A-Z]{3}$")] = "EUR"
    items: list[TradeItem] = Field(min_length=1, max_length=200)
    tax_percent: Annotated[Decimal, Field(ge=0, le=100, decimal_places=2)] = Decimal("0")
    notes: list[Line] = Field(default=[], max_length=6)

    @property
    def subtotal(self) -> Decimal:
        return sum((i.amount for i in self.items), Decimal("0.00"))

    @property
    def tax(self) -> Decimal:
        return (self.subtotal * self.tax_percent / 100).quantize(Decimal("0.01"))

    @property
    def total(self) -> Decimal:
        return self.subtotal + self.tax


class Invoice(_Trade):
    """A supplier's invoice (PDF): seller, buyer, items, tax and the total to pay by `due`."""

    kind: Literal["invoice"] = "invoice"
    seller: Party
    buyer: Party
    due: date
    purchase_order: Label | None = Field(default=None, description="The buyer's order number it bills")

    @model_validator(mode="after")
    def _due_after_issue(self) -> Invoice:
        if self.due < self.issued:
            raise ValueError(f"due {self.due} is before issued {self.issued}")
        return self


class PurchaseOrder(_Trade):
    """A buyer's purchase order (PDF) to a supplier, with the delivery date asked for."""

    kind: Literal["purchase_order"] = "purchase_order"
    buyer: Party
    supplier: Party
    deliver_by: date
    approved_by: Line | None = None


class ReceiptItem(_Spec):
    """One line of a till receipt."""

    description: Annotated[str, Field(min_length=1, max_length=21)]
    amount: Annotated[Decimal, Field(ge=Decimal("-99999.99"), le=Decimal("99999.99"), decimal_places=2)]


class Receipt(_Spec):
    """A photographed or scanned till receipt (JPEG or PNG), with paper skew and noise.

    `noise` (0 clean to 1 barely legible) sets the speckle and blur of the scan, and so
    how many mistakes the text extraction makes on it.
    """

    kind: Literal["receipt"] = "receipt"
    merchant: Annotated[str, Field(min_length=1, max_length=32)]
    address: list[Annotated[str, Field(min_length=1, max_length=32)]] = Field(default=[], max_length=3)
    when: Annotated[str, Field(min_length=1, max_length=32, description="As printed, e.g. 2026-03-02 12:41")]
    currency: Annotated[str, Field(pattern=r"^[A-Z]{3}$")] = "EUR"
    items: list[ReceiptItem] = Field(min_length=1, max_length=40)
    payment: Annotated[str, Field(min_length=1, max_length=26)] = "Card"
    skew_degrees: Annotated[float, Field(ge=-8, le=8)] = 0.0
    noise: Annotated[float, Field(ge=0, le=1)] = 0.2
    format: Literal["jpeg", "png"] = "jpeg"

    @property
    def total(self) -> Decimal:
        return sum((i.amount for i in self.items), Decimal("0.00"))


class Series(_Spec):
    """One named series of a chart: a value per category (the name fits four in the legend)."""

    name: Annotated[str, Field(min_length=1, max_length=10)]
    values: list[Annotated[float, Field(ge=-1e12, le=1e12)]] = Field(min_length=1, max_length=24)


class Chart(_Spec):
    """A bar or line chart (PNG) of one or more series over categories (months, regions...).

    A category's label is cut to the width of its slot (about 2 characters for 24
    categories, 9 for 6): keep labels short where there are many."""

    kind: Literal["bar_chart", "line_chart"]
    title: Annotated[str, Field(min_length=1, max_length=60)]
    categories: list[Label] = Field(min_length=1, max_length=24)
    series: list[Series] = Field(min_length=1, max_length=4)
    unit: Annotated[str, Field(max_length=10)] = ""

    @model_validator(mode="after")
    def _one_value_per_category(self) -> Chart:
        for s in self.series:
            if len(s.values) != len(self.categories):
                raise ValueError(
                    f"series {s.name!r} has {len(s.values)} values for {len(self.categories)} categories"
                )
        return self


class ErrorDialog(_Spec):
    """A screenshot (PNG) of an application's error dialog."""

    kind: Literal["error_dialog"] = "error_dialog"
    application: Annotated[str, Field(min_length=1, max_length=24)]
    title: Annotated[str, Field(min_length=1, max_length=32)]
    message: list[Line] = Field(min_length=1, max_length=6)
    code: Label | None = Field(default=None, description="An error code shown under the message")
    buttons: list[Annotated[str, Field(min_length=1, max_length=12)]] = Field(default=["OK"], max_length=3)


class FormField(_Spec):
    """One labelled box of a form and what was written in it."""

    label: Annotated[str, Field(min_length=1, max_length=18)]
    value: Annotated[str, Field(max_length=42)]


class Form(_Spec):
    """A filled-in paper form, scanned (PNG): a title, labelled fields, a signature line."""

    kind: Literal["form"] = "form"
    title: Line
    fields: list[FormField] = Field(min_length=1, max_length=16)
    signed_by: Label | None = None
    signed_on: date | None = None
    noise: Annotated[float, Field(ge=0, le=1)] = 0.1
    skew_degrees: Annotated[float, Field(ge=-8, le=8)] = 0.0


DocumentSpec = Annotated[
    Invoice | PurchaseOrder | Receipt | Chart | ErrorDialog | Form, Field(discriminator="kind")
]
"""Any document the files service renders, told apart by its `kind`."""

KINDS = ("invoice", "purchase_order", "receipt", "bar_chart", "line_chart", "error_dialog", "form")


def format_amount(value: Decimal) -> str:
    """An amount as documents print it: thousands separated by commas, two decimals (1,234.50)."""
    return f"{value.quantize(Decimal('0.01')):,.2f}"


def format_quantity(value: Decimal) -> str:
    """A quantity without trailing zeros (3, 2.5, 0.125)."""
    text = f"{value:f}"
    return text.rstrip("0").rstrip(".") if "." in text else text
