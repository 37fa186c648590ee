"""Relative time expressions in the user's message ("tomorrow", "next Friday", "下周一", "3天后") resolved against
the local clock, so the model never has to do calendar arithmetic itself.

Conventions, one rule each so the answers are predictable:
- Weeks start on Monday: "this/next/last week", 本周/下周/上周 are Monday-Sunday calendar weeks.
- "next Monday"/下周一 is the Monday of next calendar week (1-13 days away), "last Monday"/上周一 the Monday of
  the previous one, "this Monday"/这周一 the Monday of the current week even if it is already past.
- A bare weekday ("Monday", "on Friday", 周五, 星期三) is the coming one, strictly after today: on a Monday,
  "Monday" is seven days away.
- "this weekend"/周末 is Saturday-Sunday of the current week (on a Sunday: yesterday and today); "next
  weekend"/下周末 is the weekend of next calendar week.
- "end of the week" is the Sunday of the current week; "end of the month"/月底 its last day.
- Spans are inclusive: a day is 00:00:00-23:59:59; morning 06-12, noon 12-14, afternoon 12-18, evening, night,
  tonight, 今晚 18-24 (each ending at :59:59). "in 3 days"/"a week ago"/3天后 name a whole day, "in 5
  hours"/半小时后 a moment (elapsed time, so it is right across a DST change).
- Text in backticks is code and skipped; an English word glued to identifier characters (`today_utils.py`,
  `get_tomorrow()`, `--today`, `tomorrow.md`) is not a time expression; plurals ("on Mondays") are habits, not
  dates, and are not matched either.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta, tzinfo

from mini_agent.context.blocks import P1, ContextBlock, Enricher, Skip, TurnInput
from mini_agent.context.enrich import _timewords as words
from mini_agent.xmltext import escape


@dataclass(frozen=True)
class TimeMatch:
    original: str
    """The phrase exactly as it appears in the text."""
    start: datetime
    end: datetime
    """Inclusive: the last second of the span (23:59:59 for a whole day); equal to start for a moment."""
    kind: str
    """day, morning, noon, afternoon, evening, range (several days) or moment."""
    at: int
    """Index of `original` in the text."""


Span = tuple[str, datetime, datetime]


_CODE = re.compile(r"```.*?(?:```|\Z)|``[^\n]*?``|`[^`\n]*`", re.DOTALL)  # fenced, ``double``, `single`


def resolve(text: str, now: datetime) -> list[TimeMatch]:
    """The relative time expressions in `text`, in order, resolved against `now` (timezone-aware local time).

    Overlaps go to the longest phrase ("next weekend", never also "weekend"); a phrase repeated with the same
    meaning is reported once, where it first appears.
    """
    scanned = _mask_code(text)
    candidates = [match for pattern in (words.ENGLISH, words.CHINESE) for match in pattern.finditer(scanned)]
    candidates.sort(key=lambda match: (match.start(), -len(match[0])))
    found: list[TimeMatch] = []
    seen: set[tuple[str, datetime, datetime]] = set()
    taken_until = 0
    for match in candidates:
        if match.start() < taken_until:
            continue
        try:
            kind, start, end = _HANDLERS[match.lastgroup or ""](match, now)
        except (OverflowError, ValueError):
            continue  # out of datetime's range, or an unreadable numeral such as 一两: not a date we can name
        taken_until = match.end()
        original = text[match.start() : match.end()]
        key = (" ".join(original.casefold().split()), start, end)
        if key not in seen:
            seen.add(key)
            found.append(TimeMatch(original, start, end, kind, match.start()))
    return found


def describe(matches: list[TimeMatch], now: datetime) -> str:
    """The block text: the local time, then one line per phrase with the dates it means."""
    lines = [f"Local time now: {now:%Y-%m-%d %H:%M} {_weekday(now)}{_offset(now)}"]
    for match in matches:
        phrase = escape(" ".join(match.original.split()))
        lines.append(f'"{phrase}" = {_span_text(match)}')
    return "\n".join(lines)


def _enrich(inp: TurnInput) -> list[ContextBlock]:
    matches = resolve(inp.text, inp.now)
    if not matches:
        raise Skip("no relative time expressions")
    return [ContextBlock(name="time", priority=P1, text=describe(matches, inp.now))]


time_expressions = Enricher(name="time", enrich=_enrich, inline=True)


def _mask_code(text: str) -> str:
    # Same length, so offsets still point into the original text; NUL is neither a word nor a space, so
    # "next `x` Monday" cannot become one phrase.
    if "`" not in text:
        return text
    return _CODE.sub(lambda code: "\0" * len(code[0]), text)


def _weekday(moment: date) -> str:
    return words.WEEKDAY_NAMES[moment.weekday()]


def _offset(now: datetime) -> str:
    offset = now.utcoffset()
    if offset is None:
        return ""
    minutes = round(offset.total_seconds() / 60)
    sign = "-" if minutes < 0 else "+"
    return f" (UTC{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d})"


def _span_text(match: TimeMatch) -> str:
    start, end = match.start, match.end
    if match.kind == "moment":
        return f"{start:%Y-%m-%d %H:%M} {_weekday(start)}"
    if match.kind == "day":
        return f"{start:%Y-%m-%d} {_weekday(start)}"
    if match.kind == "range":
        return f"{start:%Y-%m-%d} {_weekday(start)} to {end:%Y-%m-%d} {_weekday(end)}"
    return f"{start:%Y-%m-%d} {_weekday(start)} {start:%H:%M}-{end:%H:%M}"


# Calendar arithmetic. Dates are wall-clock dates in now's timezone; only moments use elapsed time.


def _days(first: date, last: date, tz: tzinfo | None) -> Span:
    kind = "day" if first == last else "range"
    return kind, datetime.combine(first, time.min, tz), datetime.combine(last, words.DAY_END, tz)


def _on_day(day: date, part: str | None, tz: tzinfo | None) -> Span:
    if part is None:
        return _days(day, day, tz)
    start, end = words.PART_HOURS[part]
    return part, datetime.combine(day, start, tz), datetime.combine(day, end, tz)


def _monday(today: date) -> date:
    return today - timedelta(days=today.weekday())


def _weekday_of_week(today: date, weekday: int, weeks_ahead: int) -> date:
    return _monday(today) + timedelta(days=7 * weeks_ahead + weekday)


def _coming_weekday(today: date, weekday: int) -> date:
    return today + timedelta(days=(weekday - today.weekday() - 1) % 7 + 1)


def _add_months(day: date, months: int) -> date:
    year, month_index = divmod(day.year * 12 + day.month - 1 + months, 12)
    if not 1 <= year <= 9999:
        raise ValueError("year out of range")
    last_day = calendar.monthrange(year, month_index + 1)[1]
    return date(year, month_index + 1, min(day.day, last_day))


def _period(now: datetime, unit: str, step: int) -> Span:
    today = now.date()
    if unit in ("week", "weekend"):
        first = _monday(today) + timedelta(days=7 * step + (5 if unit == "weekend" else 0))
        return _days(first, first + timedelta(days=6 if unit == "week" else 1), now.tzinfo)
    if unit == "month":
        first = _add_months(today.replace(day=1), step)
        return _days(first, _add_months(first, 1) - timedelta(days=1), now.tzinfo)
    return _days(date(today.year + step, 1, 1), date(today.year + step, 12, 31), now.tzinfo)


def _end_of(now: datetime, unit: str) -> Span:
    _, _, last = _period(now, unit, 0)
    return _days(last.date(), last.date(), now.tzinfo)


def _shift(now: datetime, amount: int, unit: str) -> Span:
    if unit in ("minutes", "hours"):
        delta = timedelta(**{unit: amount})
        if now.tzinfo is None:
            moment = now + delta
        else:  # aware arithmetic in Python is wall-clock; elapsed time must go through UTC
            moment = (now.astimezone(UTC) + delta).astimezone(now.tzinfo)
        return "moment", moment, moment
    today = now.date()
    if unit == "days":
        day = today + timedelta(days=amount)
    elif unit == "weeks":
        day = today + timedelta(weeks=amount)
    else:
        day = _add_months(today, amount * (12 if unit == "years" else 1))
    return _days(day, day, now.tzinfo)


# One handler per top-level named group of the two patterns (match.lastgroup names the outermost one).


def _key(phrase: str) -> str:
    return " ".join(phrase.lower().split())


def _en_day(match: re.Match[str], now: datetime) -> Span:
    today = now.date()
    if match["en_rel"]:
        day = today + timedelta(days=words.EN_DAY_OFFSETS[_key(match["en_rel"])])
    else:
        weekday = words.EN_WEEKDAYS[match["en_weekday"].lower()]
        direction = match["en_dir"]
        if direction is None:
            day = _coming_weekday(today, weekday)
        else:
            day = _weekday_of_week(today, weekday, words.EN_DIRECTIONS[direction.lower()])
    part = words.EN_PARTS[match["en_part"].lower()] if match["en_part"] else None
    return _on_day(day, part, now.tzinfo)


def _en_fixed(match: re.Match[str], now: datetime) -> Span:
    offset, part = words.EN_FIXED_PARTS[_key(match[0])]
    return _on_day(now.date() + timedelta(days=offset), part, now.tzinfo)


def _en_period(match: re.Match[str], now: datetime) -> Span:
    return _period(now, match["en_punit"].lower(), words.EN_DIRECTIONS[match["en_pdir"].lower()])


def _en_shift(match: re.Match[str], now: datetime) -> Span:
    sign = 1 if match["en_in"] else -1
    if match["en_half"]:
        return _shift(now, sign * 30, "minutes")
    number = match["en_num"].lower()
    amount = int(number) if number.isdigit() else words.EN_NUMBERS[number]
    return _shift(now, sign * amount, words.EN_UNITS[match["en_unit"].lower()])


def _zh_shift(match: re.Match[str], now: datetime) -> Span:
    sign = 1 if match["zh_dir"].endswith("后") else -1
    if match["zh_half"]:
        return _shift(now, sign * 30, "minutes")
    amount = words.zh_number(match["zh_num"])
    if amount is None:
        raise ValueError(f"not a number: {match['zh_num']}")
    return _shift(now, sign * amount, words.ZH_UNITS[match["zh_unit"].removeprefix("个")])


def _zh_day(match: re.Match[str], now: datetime) -> Span:
    day = now.date() + timedelta(days=words.ZH_DAY_OFFSETS[match["zh_word"]])
    part = words.ZH_PARTS[match["zh_part"]] if match["zh_part"] else None
    return _on_day(day, part, now.tzinfo)


def _zh_fixed(match: re.Match[str], now: datetime) -> Span:
    offset, part = words.ZH_FIXED_PARTS[match[0]]
    return _on_day(now.date() + timedelta(days=offset), part, now.tzinfo)


def _zh_week(match: re.Match[str], now: datetime) -> Span:
    step = words.ZH_DIRECTIONS[match["zh_wdir"]]
    weekday = match["zh_wd1"] or match["zh_wd2"]
    if weekday:
        part = match["zh_wp1"] or match["zh_wp2"]
        day = _weekday_of_week(now.date(), words.ZH_WEEKDAYS[weekday], step)
        return _on_day(day, words.ZH_PARTS[part] if part else None, now.tzinfo)
    return _period(now, "weekend" if match["zh_we1"] or match["zh_we2"] else "week", step)


def _zh_bare(match: re.Match[str], now: datetime) -> Span:
    if match["zh_be"]:
        return _period(now, "weekend", 0)
    part = match["zh_bp1"] or match["zh_bp2"]
    day = _coming_weekday(now.date(), words.ZH_WEEKDAYS[match["zh_bd1"] or match["zh_bd2"]])
    return _on_day(day, words.ZH_PARTS[part] if part else None, now.tzinfo)


def _zh_month(match: re.Match[str], now: datetime) -> Span:
    kind, start, end = _period(now, "month", words.ZH_DIRECTIONS[match["zh_mdir"]])
    return _days(end.date(), end.date(), now.tzinfo) if match["zh_mend"] else (kind, start, end)


_HANDLERS: dict[str, Callable[[re.Match[str], datetime], Span]] = {
    "en_day": _en_day,
    "en_fixed": _en_fixed,
    "en_period": _en_period,
    "en_weekend": lambda match, now: _period(now, "weekend", 0),
    "en_endof": lambda match, now: _end_of(now, match["en_eunit"].lower()),
    "en_shift": _en_shift,
    "zh_shift": _zh_shift,
    "zh_day": _zh_day,
    "zh_fixed": _zh_fixed,
    "zh_week": _zh_week,
    "zh_bare": _zh_bare,
    "zh_month": _zh_month,
    "zh_monthend": lambda match, now: _end_of(now, "month"),
    "zh_yearend": lambda match, now: _end_of(now, "year"),
    "zh_year": lambda match, now: _period(now, "year", words.ZH_YEARS[match[0]]),
}
