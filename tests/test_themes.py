"""Theme files: validated, loaded, a broken one is a warning; the choice is remembered."""

from __future__ import annotations

from pathlib import Path

from memtui import userconfig
from memtui.themes import load_themes, parse_theme


def test_bundled_themes_load_without_warnings() -> None:
    loaded = load_themes()
    assert loaded.warnings == []
    assert {"memtui-dark", "memtui-light", "memtui-high-contrast"} <= set(loaded.themes)
    assert loaded.themes["memtui-light"].dark is False


def test_a_broken_theme_file_is_a_warning_and_the_others_load(tmp_path: Path) -> None:
    (tmp_path / "good.toml").write_text('name = "good"\nprimary = "#112233"\n')
    (tmp_path / "syntax.toml").write_text('name = "bad\n')
    (tmp_path / "colour.toml").write_text('name = "c"\nprimary = "not-a-colour"\n')
    (tmp_path / "nameless.toml").write_text('primary = "#112233"\n')
    loaded = load_themes(tmp_path)
    assert list(loaded.themes) == ["good"]
    assert len(loaded.warnings) == 3
    assert any("not a colour" in w for w in loaded.warnings)
    assert any("`name` is missing" in w for w in loaded.warnings)


def test_unknown_key_is_refused() -> None:
    try:
        parse_theme({"name": "x", "primary": "#000000", "primery": "#fff"}, "x.toml")
    except ValueError as exc:
        assert "unknown key `primery`" in str(exc)
    else:  # pragma: no cover
        raise AssertionError("expected ValueError")


def test_user_config_remembers_and_keeps_comments() -> None:
    path = userconfig.path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("# my settings\ntheme = \"memtui-dark\"\n")
    userconfig.set_value("theme", "memtui-light")
    assert userconfig.get("theme") == "memtui-light"
    assert path.read_text().startswith("# my settings")


def test_memtui_themes_lists_textuals_builtin_themes_too(capsys) -> None:  # noqa: ANN001
    """`memtui themes` ignored the built-in Textual themes --theme accepts."""
    import json

    from tests.conftest import run_cli

    code, out, _ = run_cli(capsys, "themes")
    assert code == 0
    lines = out.splitlines()
    assert any(line.split()[0] == "memtui-dark" and line.split()[-1] == "memtui" for line in lines)
    assert any(line.split()[0] == "nord" and line.split()[-1] == "textual" for line in lines)
    code, out, _ = run_cli(capsys, "themes", "--json")
    data = json.loads(out)
    assert "textual-dark" in data["builtin"] and "memtui-dark" in data["themes"]


def test_a_broken_user_config_is_never_written_over(tmp_path: Path) -> None:
    """A config.toml with a typo was silently replaced by `theme = ...` alone when a theme was
    remembered: the user's key bindings and comments were lost."""
    import pytest

    path = userconfig.path()
    path.parent.mkdir(parents=True, exist_ok=True)
    broken = '# my keys\n[keys]\n"graph.merge" = "M\n'
    path.write_text(broken, encoding="utf-8")
    assert "not valid TOML" in (userconfig.problem() or "")
    with pytest.raises(userconfig.UnreadableConfig, match="does not write over it"):
        userconfig.set_value("theme", "memtui-light")
    assert path.read_text(encoding="utf-8") == broken
    path.write_text("theme = \"memtui-dark\"\n", encoding="utf-8")
    assert userconfig.problem() is None


async def test_the_tui_says_the_user_config_is_broken_and_leaves_it(sample_copy: Path) -> None:
    from memtui.core.workspace import Workspace
    from memtui.ui.app import MemtuiApp
    from tests.conftest import wait_for

    path = userconfig.path()
    path.parent.mkdir(parents=True, exist_ok=True)
    broken = '[keys]\n"graph.merge" = "M\n'
    path.write_text(broken, encoding="utf-8")
    app = MemtuiApp(Workspace.open(sample_copy), remember_theme=lambda name: userconfig.set_value("theme", name))
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: any("not valid TOML" in str(n.message) for n in app._notifications),
                       what="the warning about the user config")
        app.theme = "memtui-light"  # a theme change cannot be remembered: said, file untouched
        await pilot.pause()
    assert path.read_text(encoding="utf-8") == broken
