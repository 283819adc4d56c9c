"""Spreadsheet families (`spreadsheet_work`, `spreadsheet_changes`): reconcile the invoice
ledger with the invoices in mail, update the price list from a supplier's mail keeping its
formulas, answer a figure that needs a formula over an expenses sheet, and answer it again
after a colleague silently corrected a row."""
