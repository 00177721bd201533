"""Theme files (``themes/*.toml``) loaded into Textual's theme system, for the TUI and ``memtui themes``.

Textual has no theme-file loader (LIBRARY-NOTES): each file is validated here and turned into
a :class:`textual.theme.Theme`. A broken file is a warning and is skipped, never a crash; an
unknown theme name falls back to ``memtui-dark`` with a warning.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from textual.color import Color, ColorParseError
from textual.theme import Theme

from memtui.paths import bundled

DEFAULT_THEME = "memtui-dark"
_COLOURS = ("primary", "secondary", "accent", "warning", "error", "success", "foreground",
            "background", "surface", "panel", "boost")
_NUMBERS = ("luminosity_spread", "text_alpha")


@dataclass(slots=True)
class LoadedThemes:
    """Themes read from a folder: ``themes`` by name, and one warning per rejected file."""

    themes: dict[str, Theme] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def parse_theme(data: dict, source: str) -> Theme:
    """Validate the parsed TOML of one theme file and build a :class:`Theme`.

    Raises:
        ValueError: with a sentence naming the file and the bad key.
    """
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"{source}: `name` is missing (give the theme a name)")
    if "primary" not in data:
        raise ValueError(f"{source}: `primary` colour is missing")
    kwargs: dict = {"name": name.strip()}
    for key, value in data.items():
        if key in ("name", "variables"):
            continue
        if key in _COLOURS:
            if not isinstance(value, str):
                raise ValueError(f"{source}: `{key}` must be a colour in quotes, like \"#5FA8D3\"")
            try:
                Color.parse(value)
            except ColorParseError:
                raise ValueError(f"{source}: `{key}` = {value!r} is not a colour") from None
            kwargs[key] = value
        elif key == "dark":
            if not isinstance(value, bool):
                raise ValueError(f"{source}: `dark` must be true or false")
            kwargs[key] = value
        elif key in _NUMBERS:
            if not isinstance(value, (int, float)) or isinstance(value, bool):
                raise ValueError(f"{source}: `{key}` must be a number")
            kwargs[key] = float(value)
        else:
            raise ValueError(f"{source}: unknown key `{key}`")
    variables = data.get("variables", {})
    if not isinstance(variables, dict) or not all(isinstance(v, str) for v in variables.values()):
        raise ValueError(f"{source}: [variables] must map names to text values")
    kwargs["variables"] = {str(k): v for k, v in variables.items()}
    return Theme(**kwargs)


def load_themes(folder: Path | None = None) -> LoadedThemes:
    """Read every ``*.toml`` in ``folder`` (default: the bundled ``themes/``), sorted by name."""
    out = LoadedThemes()
    try:
        folder = folder or bundled("themes")
    except FileNotFoundError as exc:
        out.warnings.append(str(exc))
        return out
    for file in sorted(folder.glob("*.toml")):
        try:
            data = tomllib.loads(file.read_text(encoding="utf-8"))
            theme = parse_theme(data, file.name)
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError) as exc:
            out.warnings.append(f"theme file {file.name} skipped: {exc}")
            continue
        except ValueError as exc:
            out.warnings.append(f"theme file skipped: {exc}")
            continue
        out.themes[theme.name] = theme
    return out


def theme_names() -> list[str]:
    """Every name ``memtui --theme NAME`` accepts: memtui's theme files, then Textual's
    built-in themes that no file replaces (each list sorted)."""
    from textual.theme import BUILTIN_THEMES

    ours = sorted(load_themes().themes)
    return ours + sorted(name for name in BUILTIN_THEMES if name not in ours)
