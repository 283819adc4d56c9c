"""Documents and images as evidence: rendered from facts (`specs`, `render`), shown to an
agent as MCP content and read as text (`delivery`, `ocr`, `transcript`).

Nothing is imported here: the PDF library takes a while to load, and only a seed or an
event that plants a document needs it (`render.render`).
"""
