# SPDX-License-Identifier: Apache-2.0
"""What a settings file may hold: its sections, each owned by one part of
the program or one plugin, and in each the keys with their type, default,
range or choices, and a line saying what the key does.

    settings = SettingsRegistry()
    (settings.section("cache", "Where the plugin keeps its files")
        .string("path", "", "folder of the cache; empty: none")
        .integer("depth", 2, 1, 8, "levels of subfolders"))
    settings.check("cache.depth", 3)        # 3; ConfigError naming the key and the range otherwise

Owners: the engine declares [engine], [prover], [srs] and [logging]
(engine.config); the daemon [daemon], registered here as a built-in when
porep_prover is imported (add_built_in); a plugin its own, through the hook
porep_prover_register_settings (porep_prover.hooks.collect_settings). A
section has exactly one owner: a second one declaring it is a ConfigError
naming both. This module knows no owner; the layers above bring theirs.
"""
from __future__ import annotations

import dataclasses
import math
import re
from typing import Any, Callable, Iterable, cast

from .errors import ConfigError

NAME = re.compile(r"^[a-z][a-z0-9_]*$")         # a bare TOML key, and a Python name
SECTION_NAME = re.compile(r"^[a-z][a-z0-9_-]*$")
KINDS = ("integer", "number", "boolean", "string", "choice", "strings")


@dataclasses.dataclass(frozen=True)
class Form:
    """A check beyond the type: test(value) for a string, or for each item of
    a list of strings; wanted says, whole, what the setting takes (the error
    reads "setting 'k' must be <wanted>, got ...")."""
    test: Callable[[str], bool]
    wanted: str


@dataclasses.dataclass(frozen=True)
class Setting:
    """One key: kind is one of KINDS; low and high bound an integer or a
    number (inclusive); options are a choice's values (fold_case: any case
    is taken and stored as the option's); form narrows a string or a list
    of strings. default is stored as given (a list as a tuple)."""
    key: str
    kind: str
    default: Any
    doc: str
    low: float | None = None
    high: float | None = None
    options: tuple[str, ...] = ()
    fold_case: bool = False
    form: Form | None = None

    @property
    def name(self) -> str:
        return self.key.split(".", 1)[1]

    def _bounds(self) -> tuple[float, float]:
        """low and high, which an integer or a number always has (Section.integer and Section.number set
        both); read only for those kinds."""
        return cast(float, self.low), cast(float, self.high)

    def wanted(self) -> str:
        """What the key takes, as the error message says it."""
        if self.kind == "integer":
            return f"an integer from {self.low} to {self.high}"
        if self.kind == "number":
            low, high = self._bounds()
            return f"a finite number from {_plain(low)} to {_plain(high)}"
        if self.kind == "boolean":
            return "true or false"
        if self.kind == "choice":
            shown = self.options if self.fold_case else [repr(o) for o in self.options]
            return "one of " + ", ".join(shown)
        if self.form is not None:
            return self.form.wanted
        return "a string" if self.kind == "string" else "a list of strings"

    def accepts(self, value) -> bool:
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if self.kind == "integer":
            low, high = self._bounds()
            return number and isinstance(value, int) and low <= value <= high
        if self.kind == "number":       # NaN and infinities fail the comparison
            low, high = self._bounds()
            return number and low <= value <= high
        if self.kind == "boolean":
            return isinstance(value, bool)
        if self.kind == "choice":
            return isinstance(value, str) and self._option(value) is not None
        test = self.form.test if self.form is not None else (lambda _: True)
        if self.kind == "string":
            return isinstance(value, str) and test(value)
        return isinstance(value, list) and all(isinstance(x, str) and test(x) for x in value)

    def check(self, value) -> Any:
        """value as the config keeps it (a number as a float, a choice as
        its option); ConfigError naming the key and what it takes otherwise."""
        if not self.accepts(value):
            raise ConfigError(f"setting {self.key!r} must be {self.wanted()}, got {value!r}", key=self.key)
        if self.kind == "number":
            return float(value)
        if self.kind == "choice":
            return self._option(value)
        return list(value) if self.kind == "strings" else value

    def fresh_default(self) -> Any:
        """The default, a list copied so that no config shares it."""
        return list(self.default) if self.kind == "strings" else self.default

    def describe(self) -> dict:
        """The key as `porep-prover config --json` shows it."""
        out = {"key": self.key, "type": "list of strings" if self.kind == "strings" else self.kind,
               "default": self.fresh_default(), "accepts": self.wanted(), "doc": self.doc}
        if self.kind in ("integer", "number"):
            out.update(low=self.low, high=self.high)
        if self.options:
            out["options"] = list(self.options)
        return out

    def _option(self, value: str) -> str | None:
        for option in self.options:
            if value == option or (self.fold_case and value.casefold() == option.casefold()):
                return option
        return None


def _plain(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


class Section:
    """A section being declared: each method adds a key and returns the
    section, so that declarations chain. ConfigError for a name that is not
    a bare lower-case key, a key declared twice, a doc that is not one line,
    bounds the wrong way round, or a default the key itself refuses: the
    declaring plugin is wrong, and says so when its section is collected."""

    def __init__(self, name: str, doc: str = "", owner: str = ""):
        if not isinstance(name, str) or not SECTION_NAME.match(name):
            raise ConfigError(f"section name {name!r} is not lower-case letters, digits, _ and -", key=str(name))
        self.name, self.doc, self.owner = name, _one_line(doc, f"section [{name}]", empty_ok=True), owner
        self.settings: dict[str, Setting] = {}

    def integer(self, name: str, default: int, low: int, high: int, doc: str) -> "Section":
        if not all(isinstance(b, int) and not isinstance(b, bool) for b in (low, high)):
            raise ConfigError(f"setting {self._key(name)!r}: bounds {low!r}, {high!r} are not integers")
        return self._add(Setting(self._key(name), "integer", default, doc, low=low, high=high))

    def number(self, name: str, default: float, low: float, high: float, doc: str) -> "Section":
        if not all(isinstance(b, (int, float)) and not isinstance(b, bool) and math.isfinite(b) for b in (low, high)):
            raise ConfigError(f"setting {self._key(name)!r}: bounds {low!r}, {high!r} are not finite numbers")
        default = float(default) if isinstance(default, int) and not isinstance(default, bool) else default
        return self._add(Setting(self._key(name), "number", default, doc, low=low, high=high))

    def boolean(self, name: str, default: bool, doc: str) -> "Section":
        return self._add(Setting(self._key(name), "boolean", default, doc))

    def string(self, name: str, default: str, doc: str, form: Form | None = None) -> "Section":
        return self._add(Setting(self._key(name), "string", default, doc, form=form))

    def choice(self, name: str, default: str, options: Iterable[str], doc: str, fold_case: bool = False) -> "Section":
        options = tuple(options)
        if not options or not all(isinstance(o, str) for o in options):
            raise ConfigError(f"setting {self._key(name)!r}: the options must be strings, at least one")
        return self._add(Setting(self._key(name), "choice", default, doc, options=options, fold_case=fold_case))

    def strings(self, name: str, default: Iterable[str], doc: str, form: Form | None = None) -> "Section":
        return self._add(Setting(self._key(name), "strings", tuple(default), doc, form=form))

    def _key(self, name: str) -> str:
        if not isinstance(name, str) or not NAME.match(name):
            raise ConfigError(f"setting name {name!r} in [{self.name}] is not a lower-case key "
                              "(letters, digits and _)", key=f"{self.name}.{name}")
        return f"{self.name}.{name}"

    def _add(self, setting: Setting) -> "Section":
        key = setting.key
        if setting.name in self.settings:
            raise ConfigError(f"setting {key!r} is declared twice", key=key)
        _one_line(setting.doc, f"setting {key!r}")
        if setting.low is not None and not setting.low <= setting._bounds()[1]:
            raise ConfigError(f"setting {key!r}: low {setting.low!r} is above high {setting.high!r}", key=key)
        default = list(setting.default) if setting.kind == "strings" else setting.default
        if not setting.accepts(default) or (setting.kind == "choice" and default not in setting.options):
            raise ConfigError(f"setting {key!r}: the default {default!r} is not {setting.wanted()}", key=key)
        self.settings[setting.name] = setting
        return self


def _one_line(doc, what: str, empty_ok: bool = False) -> str:
    if not isinstance(doc, str) or "\n" in doc or not (doc.strip() or empty_ok):
        raise ConfigError(f"{what}: its doc must be one line of text, got {doc!r}")
    return doc.strip()


class SettingsRegistry:
    """The sections a config may hold, in the order they were declared.
    What porep_prover_register_settings(settings) receives: a plugin calls
    settings.section(name, doc) and declares its keys on what it returns."""

    def __init__(self) -> None:
        self._sections: dict[str, Section] = {}

    def section(self, name: str, doc: str = "") -> Section:
        """Declare [name] (owned by whoever this registry is merged for);
        ConfigError when this registry has it already."""
        if name in self._sections:
            raise ConfigError(f"section [{name}] is declared twice", key=name)
        self._sections[name] = section = Section(name, doc)
        return section

    def merge(self, other: "SettingsRegistry", owner: str) -> list[str]:
        """other's sections, owned by owner, added to these; their names.
        ConfigError naming both owners when one of them is here already
        (nothing of other is added then)."""
        for name in other._sections:
            if name in self._sections:
                raise ConfigError(f"section [{name}] is declared by both {self._sections[name].owner} and {owner}"
                                  "; a section belongs to one owner: uninstall one of them", key=name)
        for name, section in other._sections.items():
            added = Section(name, section.doc, owner)
            added.settings = dict(section.settings)
            self._sections[name] = added
        return list(other._sections)

    def declare(self, owner: str, declare: Callable[["SettingsRegistry"], None]) -> list[str]:
        """declare(staged) on a registry of its own, then merged as owner's."""
        staged = SettingsRegistry()
        declare(staged)
        return self.merge(staged, owner)

    def copy(self) -> "SettingsRegistry":
        out = SettingsRegistry()
        out._sections = dict(self._sections)
        return out

    @property
    def sections(self) -> tuple[Section, ...]:
        return tuple(self._sections.values())

    def has_section(self, name: str) -> bool:
        return name in self._sections

    def setting(self, key: str) -> Setting | None:
        section, _, name = key.partition(".")
        found = self._sections.get(section)
        return found.settings.get(name) if found is not None else None

    def defaults(self) -> dict:
        """Every key's default, by dotted key (lists fresh copies)."""
        return {s.key: s.fresh_default() for sec in self._sections.values() for s in sec.settings.values()}

    def resolve_key(self, name: str) -> str:
        """A dotted key, also from its last part alone when one section has it ("partition_workers")."""
        if "." in name:
            return name
        matches = self._matches(name)
        return matches[0] if len(matches) == 1 else name

    def check(self, key: str, value) -> Any:
        """value as the config keeps it (Setting.check); ConfigError for a
        key no section declares, naming the keys its section has (or the
        sections there are)."""
        setting = self.setting(key)
        if setting is None:
            raise ConfigError(f"unknown setting {key!r}{self._unknown(key)}", key=key)
        return setting.check(value)

    def unknown_section(self, name: str) -> ConfigError:
        return ConfigError(f"unknown section [{name}] ({self.known()})", key=name)

    def known(self) -> str:
        """The sections there are, with their owners, as error messages name them."""
        by_owner: dict[str, list[str]] = {}
        for section in self._sections.values():
            by_owner.setdefault(section.owner or "?", []).append(f"[{section.name}]")
        listed = "; ".join(f"{' '.join(names)} of {owner}" for owner, names in by_owner.items())
        return f"sections: {listed or 'none'}; a plugin's section is known where the plugin is installed"

    def _matches(self, name: str) -> list[str]:
        return [f"{sec.name}.{name}" for sec in self._sections.values() if name in sec.settings]

    def _unknown(self, key: str) -> str:
        section, dot, name = key.partition(".")
        if not dot:
            matches = self._matches(key)
            if matches:
                return f": name it with its section ({', '.join(matches)})"
            return f": a key is section.key ({self.known()})"
        found = self._sections.get(section)
        if found is None:
            return f": there is no section [{section}] ({self.known()})"
        return f": [{section}] (of {found.owner or '?'}) has {', '.join(found.settings) or 'no keys'}"


_BUILT_IN: dict[str, Callable[[SettingsRegistry], None]] = {}


def add_built_in(owner: str, declare: Callable[[SettingsRegistry], None]) -> None:
    """A part of the program above the engine that owns sections (the
    daemon its [daemon]): declare(settings) is called as the hook
    porep_prover_register_settings is, wherever the built-in sections are
    gathered (engine.config.default_sections). porep_prover registers these
    when it is imported, so every config knows them."""
    _BUILT_IN[owner] = declare


def built_ins() -> tuple[tuple[str, Callable[[SettingsRegistry], None]], ...]:
    """(owner, declare) of every built-in added, in order."""
    return tuple(_BUILT_IN.items())
