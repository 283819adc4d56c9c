"""MCP tools as Python methods with typed signatures and Google-style docstrings, for
trainers that read a tool's schema from a function (TRL, via transformers'
`get_json_schema`). Types follow the JSON schema exactly (enums become `Literal`, optional
arguments default to their schema default); bounds that a type hint cannot carry (lengths,
minimum and maximum) are written into the argument's description."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, Literal

_SCALARS: dict[str, Any] = {"string": str, "integer": int, "number": float, "boolean": bool}


def type_hint(schema: dict[str, Any], defs: dict[str, Any] | None = None) -> Any:
    """The Python type hint for a JSON schema (the subset MCP tools publish)."""
    defs = defs or {}
    if "$ref" in schema:
        return type_hint(defs[schema["$ref"].rsplit("/", 1)[-1]], defs)
    if "anyOf" in schema:
        options = [s for s in schema["anyOf"] if s.get("type") != "null"]
        nullable = len(options) < len(schema["anyOf"])
        hints = tuple(type_hint(s, defs) for s in options)
        hint: Any = hints[0]
        for other in hints[1:]:
            hint = hint | other
        return hint | None if nullable else hint
    if "enum" in schema:
        return Literal[tuple(schema["enum"])]
    kind = schema.get("type")
    if kind == "array":
        return list[type_hint(schema.get("items", {"type": "string"}), defs)]  # type: ignore[misc]
    if kind == "object":
        return dict
    if kind in _SCALARS:
        return _SCALARS[kind]
    raise ValueError(f"no Python type for the JSON schema {schema}")


def bounds_text(schema: dict[str, Any]) -> str:
    """What a type hint cannot say about a value: its length and range limits."""
    if "anyOf" in schema:
        return "; ".join(t for t in (bounds_text(s) for s in schema["anyOf"]) if t)
    parts = []
    if "minLength" in schema or "maxLength" in schema:
        parts.append(_range("characters", schema.get("minLength"), schema.get("maxLength")))
    if "minItems" in schema or "maxItems" in schema:
        parts.append(_range("items", schema.get("minItems"), schema.get("maxItems")))
    if "minimum" in schema or "maximum" in schema:
        low, high = schema.get("minimum"), schema.get("maximum")
        if high is not None and abs(high) >= 2**31 - 1:
            high = None  # the range of an id: no bound a model needs to know
        if low is not None and low <= -(2**31):
            low = None
        if low is not None or high is not None:
            parts.append(_range("", low, high).strip())
    return "; ".join(p for p in parts if p)


def _range(unit: str, low: Any, high: Any) -> str:
    if low is not None and high is not None:
        return f"{low} to {high} {unit}".rstrip()
    if high is not None:
        return f"at most {high} {unit}".rstrip()
    return f"at least {low} {unit}".rstrip()


def tool_method(
    name: str, description: str, parameters: dict[str, Any], call: Callable[..., Any]
) -> Callable[..., Any]:
    """A method `name(self, **arguments)` whose signature, annotations and docstring describe
    the tool; calling it runs `call(self, name, arguments)` with the arguments given."""
    defs = parameters.get("$defs", {})
    required = set(parameters.get("required", []))
    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    annotations: dict[str, Any] = {}
    docs = []
    props: dict[str, Any] = parameters.get("properties", {})
    # Required arguments first: a Python signature cannot put them after defaulted ones.
    for arg in sorted(props, key=lambda a: a not in required):
        schema = props[arg]
        hint = type_hint(schema, defs)
        default = inspect.Parameter.empty if arg in required else schema.get("default")
        params.append(
            inspect.Parameter(arg, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=hint)
        )
        annotations[arg] = hint
        text = " ".join((schema.get("description") or schema.get("title") or arg).split())
        limits = bounds_text(schema)
        docs.append(f"    {arg}: {text}{f' ({limits})' if limits else ''}")
    annotations["return"] = str

    def method(self: Any, **arguments: Any) -> Any:
        return call(self, name, arguments)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = " ".join(description.split()) + ("\n\nArgs:\n" + "\n".join(docs) if docs else "")
    method.__signature__ = inspect.Signature(params, return_annotation=str)  # type: ignore[attr-defined]
    method.__annotations__ = annotations
    return method
